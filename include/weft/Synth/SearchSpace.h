//===- SearchSpace.h - The instruction set at fixed ratios ----*- C++ -*-===//
//
// The program space the synthesizer searches (docs/Design.md §4,
// docs/Synthesis.md) made explicit and IR-free after construction: a fixed
// topological order of the graph program's non-leaf ops; per op its options
// (one sharding-rule variant per mesh axis, combined, with the distribution
// each operand needs and each result gets); per option and device
// representative the compute (forward + backward), kept and transient bytes;
// and the transition function `step()` that applies one option (plus the
// parameter strategies of parameters used for the first time) to a state,
// adding the collectives the preconditions need (weft::spmd::planRelayout)
// priced with the evaluator's cost functions (lib/Cost via lib/Eval's
// CollectivePricer, op costs via the graph CostOpInterface at shard shapes).
//
// Devices are folded into representatives: devices of one mesh-node class at
// one local position see the same shard shapes and collective groups of the
// same links, so every per-device figure is computed once per representative
// (exact for the evaluator's model).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_SEARCHSPACE_H
#define WEFT_SYNTH_SEARCHSPACE_H

#include "Spmd/IR/SpmdAttrs.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Spmd/Duals.h"
#include "weft/Synth/MemoryTally.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft {
class MeshLayout;
namespace synth {

/// An interned distribution (index into SearchSpace::dists).
using DistId = uint32_t;
/// An interned set of held distributions of one value (index into
/// SearchSpace::heldSets).
using HeldId = uint32_t;
/// "No distribution": an operand without a layout.
constexpr DistId kNoDist = ~0u;

/// A value of the graph program.
struct ValueInfo {
  enum class Kind { Op, Parameter, Buffer, Input };
  Kind kind = Kind::Op;
  mlir::Value value;
  /// Interned type (shape and element type).
  unsigned typeId = 0;
  llvm::SmallVector<int64_t, 4> shape;
  bool isFloat = false;
  /// A gradient flows back to it (it depends on a trainable parameter).
  bool grad = false;
  /// Position of the defining op (-1 for leaves).
  int defPos = -1;
  /// Positions of the ops using it, ascending (an op using it twice once).
  llvm::SmallVector<unsigned, 2> uses;
  /// First position at which it is available: defPos + 1, or the first use
  /// for a leaf.
  unsigned availableAt = 0;
  /// Name of a leaf ("" for op results).
  std::string name;
};

/// One option of one op: a variant per mesh axis.
struct OpOption {
  /// Index into OpInfo::variants per mesh axis.
  llvm::SmallVector<uint16_t, 4> perAxis;
  /// Required distribution per operand (kNoDist: no precondition).
  llvm::SmallVector<DistId, 4> operands;
  /// Distribution per result.
  llvm::SmallVector<DistId, 2> results;
  /// Per representative: forward + backward compute seconds.
  std::vector<double> compute;
  /// Per representative: forward compute seconds alone (charged again when
  /// the op is recomputed).
  std::vector<double> forward;
  /// Per representative: seconds of the all-reduces inside the recipe
  /// (weft/Spmd/RecipeStats.h), forward and dual; charged as
  /// communication of the step.
  std::vector<double> recipeComm;
  /// Per representative: the forward part of recipeComm.
  std::vector<double> recipeForward;
  /// Per representative: bytes kept for the backward pass.
  std::vector<double> kept;
  /// Per representative: bytes of the results (a transient buffer).
  std::vector<double> produced;
};

/// A non-leaf op at one position of the order.
struct OpInfo {
  mlir::Operation *op = nullptr;
  /// Value ids of the operands and results.
  llvm::SmallVector<unsigned, 4> operands, results;
  /// Variant names (one list, the same for every axis).
  std::vector<std::string> variantNames;
  std::vector<OpOption> options;
  /// Per representative: the cheapest option's compute.
  std::vector<double> minCompute;
  /// A gradient flows through it (it has a backward pass).
  bool grad = false;
};

/// A parameter storage/update strategy choice at a parameter's first use.
struct StorageOption {
  spmd::ParamStrategy strategy = spmd::ParamStrategy::Replicated;
  /// How it is stored (differs from the use's distribution for zero3).
  DistId stored = 0;
  /// Per representative: gradient synchronisation charged to the step.
  llvm::SmallVector<double, 8> sync;
  /// Per representative: parameter, gradient and optimizer-state bytes.
  llvm::SmallVector<double, 8> committed;
  /// Optimizer update plus after-update gathers (max over devices).
  double optimizerSeconds = 0;
};

/// The search state (fixed position implied by the owner): the held set of
/// every live value at the position, in SearchSpace::liveAt order.
using StateKey = llvm::SmallVector<HeldId, 8>;

/// What one transition did, for explain rows.
struct StepDetail {
  struct Relayout {
    unsigned value = 0;
    DistId from = 0, to = 0;
    /// Forward + dual seconds on the slowest representative.
    double seconds = 0;
    /// Largest per-device bytes moved by one collective of the relayout.
    double bytes = 0;
    unsigned collectives = 0;
  };
  llvm::SmallVector<Relayout, 4> relayouts;
  double computeSeconds = 0, commSeconds = 0, optimizerSeconds = 0;
  /// The least communication over representatives (commSeconds the most).
  double commLeast = 0;
};

/// The result of applying one choice at one position: its cost, the state
/// after it and what it does to memory.
struct StepResult : StepMemory {
  double cost = 0;
  StateKey next;
};

/// The choice made at one position.
struct StepChoice {
  uint16_t option = 0;
  /// Recompute the op's forward in the backward pass (docs/Synthesis.md
  /// "Recomputation"); offered only when the space allows it.
  bool recompute = false;
  /// Storage option index per first-used parameter operand, in operand
  /// order (0 for other operands).
  llvm::SmallVector<uint8_t, 4> storage;
  bool operator==(const StepChoice &o) const {
    return option == o.option && recompute == o.recompute &&
           storage == o.storage;
  }
};

/// Keys packing several fields into 64 bits, mixed before hashing (LLVM's
/// own hash of a 64-bit integer keeps only its low 32 bits' information).
/// ~0 and ~0 - 1 are reserved.
struct PackedKeyInfo {
  static uint64_t getEmptyKey() { return ~uint64_t(0); }
  static uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return unsigned(x);
  }
  static bool isEqual(uint64_t a, uint64_t b) { return a == b; }
};

class TreeBound;

/// The space for one graph program, cluster and fixed ratios. Built once
/// (lib/Synth/SpaceBuild.cpp), then read by the searches through the
/// accessors below; only step() and the memoised pricing tables change
/// after construction (lib/Synth/SpaceStep.cpp).
class SearchSpace {
public:
  ~SearchSpace();
  /// Not copied nor moved: the read-only views below refer to its own data.
  SearchSpace(const SearchSpace &) = delete;
  SearchSpace &operator=(const SearchSpace &) = delete;
  /// Builds the space. `ratios` per mesh class (sum over devices 1); empty
  /// means proportional to peak FLOP/s. Errors: bad input.
  /// `recompute` offers activation recomputation as a choice of every op
  /// with a backward pass and saved tensors. Without `bounds` the op cost
  /// floors and the tree bound are not built (most of the build's time):
  /// heuristic(p) is then the compute bound alone and opFloor 0, enough for
  /// callers that only price, replay and improve plans (seeds, local
  /// improvement; lib/Cell's fast mode), not for the A*.
  static llvm::Expected<std::unique_ptr<SearchSpace>>
  build(mlir::ModuleOp graph, const ClusterSpec &spec, const EvalOptions &eval,
        llvm::ArrayRef<double> ratios = {}, bool recompute = false,
        bool bounds = true);
  /// Recomputation is among the choices.
  bool recomputes() const { return recompute_; }
  /// The graph's `spmd.micro_batches` (gradient accumulation). Step costs
  /// are then per micro-batch: the once-per-step gradient sync of whole
  /// gradients and the optimizer step count 1/m, so a plan's cost is its
  /// step time / m (docs/Synthesis.md "Gradient accumulation").
  int64_t microBatches() const { return microBatches_; }
  /// The held-set tag bit of a value produced by a recomputed op of the
  /// open run and never relaid (a recomputed consumer need not keep it).
  static constexpr uint8_t kRunTag = 0x80;

  //===--------------------------------------------------------------------===//
  // The program and the mesh (read-only after build)
  //===--------------------------------------------------------------------===//

  /// The graph's values by id and its non-leaf ops in the search's order.
  const std::vector<ValueInfo> &values = values_;
  const std::vector<OpInfo> &ops = ops_;
  /// The mesh the space is priced at, its size per axis and the ratios per
  /// mesh class.
  const spmd::MeshAttr &mesh = mesh_;
  const llvm::SmallVector<int64_t, 4> &axisSizes = axisSizes_;
  const std::vector<double> &ratios = ratios_;
  /// Mesh devices standing for the others (devices of one mesh-node class
  /// at one local position), one per representative.
  const std::vector<unsigned> &repDevices = repDevices_;
  /// Per representative, how many devices it stands for.
  llvm::ArrayRef<unsigned> repWeight() const { return repWeight_; }
  /// One segment per split extent, all at the fixed ratios.
  llvm::ArrayRef<spmd::SegmentAttr> segments() const { return segments_; }

  unsigned numPositions() const { return ops_.size(); }
  unsigned numReps() const { return repDevices_.size(); }
  unsigned numAxes() const { return axisSizes_.size(); }

  /// Live values at position p (before op p runs), by value id.
  llvm::ArrayRef<unsigned> live(unsigned p) const { return liveAt_[p]; }
  /// Positions where the live set is smallest (at most `slack` more values
  /// than the least over positions 1..n-1: the residual stream and what
  /// every block uses), with 0 and n: the block boundaries of the memoised
  /// search.
  std::vector<unsigned> cuts(unsigned slack = 1) const;
  /// The block boundaries of checkpointed seeds: positions where the live
  /// set is smallest not counting values live over more than half of the
  /// order (a causal mask or a table every block reads keeps the least of
  /// cuts() at the graph's ends otherwise), with 0 and n.
  std::vector<unsigned> checkpointCuts() const;

  //===--------------------------------------------------------------------===//
  // Transitions (lib/Synth/SpaceStep.cpp)
  //===--------------------------------------------------------------------===//

  /// Storage options of leaf `value` when first used with `use`.
  llvm::ArrayRef<StorageOption> storageOptions(unsigned value, DistId use);

  /// Applies `choice` at position `p` to `key`. None when impossible (a
  /// relayout that cannot be done). Fills `detail` when given.
  std::optional<StepResult> step(unsigned p, const StateKey &key,
                                 const StepChoice &choice,
                                 StepDetail *detail = nullptr);

  /// Calls `f(choice)` for every choice at position p in deterministic
  /// order (options × storage options of first-used parameters).
  void forEachChoice(unsigned p,
                     llvm::function_ref<void(const StepChoice &)> f);

  /// Per representative, the seconds (forward + dual) of relaying `value`
  /// from `from` to `to` as step() charges it; null when impossible.
  const RepVector *relayoutSeconds(unsigned value, DistId from, DistId to,
                                   bool zero3);
  /// The distributions a use of `value` at a position >= p may require.
  llvm::ArrayRef<DistId> usefulAt(unsigned value, unsigned p) const;

  //===--------------------------------------------------------------------===//
  // Bounds (lib/Synth/TreeBound.cpp)
  //===--------------------------------------------------------------------===//

  /// h: the largest of the bounds that do not look at a state (per
  /// representative Σ over positions ≥ p of the cheapest compute, the op
  /// cost floors and the tree bound): admissible.
  double heuristic(unsigned p) const { return suffixH_[p]; }
  /// The admissible heuristic of a state: heuristic(p) with the tree bound
  /// charged from what the state holds (docs/Synthesis.md "State bound").
  /// Infinity when no completion is possible.
  double heuristic(unsigned p, const StateKey &key);
  /// A lower bound on the cost of positions [p, b) from a state at p: the
  /// op floors of [p, b) plus, per live op result, its dearest use in
  /// [p, b) at its cheapest relayout from what the state holds (each value
  /// once; the memoised search prunes a block with it).
  double blockBound(unsigned p, unsigned b, const StateKey &key);
  /// A lower bound on what relaying `value` from `from` to `to` at a use at
  /// position `by` or before adds to the step that does it: the least over
  /// devices, plus the least over those uses of the slot's share of what the
  /// dearest device pays beyond that and beyond the step's own spread
  /// (docs/Synthesis.md "Tree bound").
  double relayBound(unsigned value, DistId from, DistId to, unsigned by = ~0u);
  /// The least cost any step at position p can have (its op's cost floor:
  /// least over options of compute + least gradient sync + least optimizer).
  double opFloor(unsigned p) const { return opFloor_[p]; }

  //===--------------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------------===//

  /// Per representative: memory capacity (bytes, after the reserve).
  const RepVector &capacity() const { return capacity_; }
  /// A lower bound on the memory the ops at positions >= p still commit on
  /// representative r (Σ over those ops of the least kept bytes plus the
  /// least storage of the leaves they use first, over their options): a
  /// state whose committed memory plus this exceeds the capacity cannot
  /// complete within memory.
  double memoryFloor(unsigned p, unsigned r) const {
    return memoryFloor_[p][r];
  }
  /// A partial plan at position p with memory `m` may still complete
  /// within memory: peak plus the floor of the ops to come fits everywhere.
  bool mayFit(const MemoryTally &m, unsigned p) const {
    for (unsigned r = 0; r < numReps(); ++r)
      if (m.peak(r) + memoryFloor(p, r) > capacity_[r])
        return false;
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Interned distributions and held sets
  //===--------------------------------------------------------------------===//

  spmd::DistAttr dist(DistId id) const { return dists_[id]; }
  DistId intern(spmd::DistAttr d);
  /// The held set's strategy tag (0 none, 1 + ParamStrategy) and dists.
  struct HeldSet {
    uint8_t tag = 0;
    llvm::SmallVector<DistId, 2> dists;
    bool operator==(const HeldSet &o) const {
      return tag == o.tag && dists == o.dists;
    }
    /// A multiplicative mix: held sets are hashed on every transition, and
    /// they are short lists of small ids.
    struct Hash {
      size_t operator()(const HeldSet &s) const {
        uint64_t h = s.tag;
        for (DistId d : s.dists)
          h = (h ^ d) * 0x9E3779B97F4A7C15ull;
        return size_t(h ^ (h >> 29));
      }
    };
  };
  const HeldSet &held(HeldId id) const { return heldSets_[id]; }
  HeldId internHeld(const HeldSet &s);

private:
  /// Cost tables and pricing state (lib/Synth/SpaceImpl.h).
  struct Impl;
  friend struct SpaceBuilder;
  friend struct Transition;
  friend class TreeBound;

  SearchSpace();
  const RepVector &shardBytes(unsigned value, DistId dist);
  /// storageOptions' pieces (lib/Synth/SpaceStorage.cpp): the options of
  /// leaf `v` first used with `use`; a buffer's or input's (as used); the
  /// strategies a parameter may take and where each stores it; one priced.
  std::vector<StorageOption> makeStorageOptions(const ValueInfo &v, DistId use);
  StorageOption leafStorage(const ValueInfo &v, DistId use);
  llvm::SmallVector<std::pair<spmd::ParamStrategy, spmd::DistAttr>, 4>
  storageCandidates(const ValueInfo &v, spmd::DistAttr use) const;
  StorageOption priceStorage(const ValueInfo &v, spmd::ParamStrategy strategy,
                             spmd::DistAttr stored);

  std::unique_ptr<Impl> impl_;
  std::unique_ptr<TreeBound> bound_;

  std::vector<ValueInfo> values_;
  std::vector<OpInfo> ops_;
  spmd::MeshAttr mesh_;
  std::vector<spmd::SegmentAttr> segments_;
  std::vector<double> ratios_;
  llvm::SmallVector<int64_t, 4> axisSizes_;
  std::vector<unsigned> repDevices_, repWeight_;
  bool recompute_ = false;
  int64_t microBatches_ = 1;

  std::vector<spmd::DistAttr> dists_;
  llvm::DenseMap<mlir::Attribute, DistId> distIds_;
  std::vector<HeldSet> heldSets_;
  std::unordered_map<HeldSet, HeldId, HeldSet::Hash> heldIds_;
  std::vector<llvm::SmallVector<unsigned, 8>> liveAt_;
  /// Per value and use index k: the sorted distributions any option of a
  /// use at index >= k may require of it (held distributions outside this
  /// set can never make a later relayout free, so states drop them).
  std::vector<std::vector<std::vector<DistId>>> usefulFrom_;
  /// Storage options of leaves at first use, memoised by (kind and type of
  /// the leaf, use dist): they depend on nothing else, so the parameters
  /// of repeated layers share them.
  llvm::DenseMap<std::pair<uint64_t, DistId>, std::vector<StorageOption>>
      storage_;
  /// Per value type and distribution (the type id in the high 32 bits):
  /// bytes of each representative's shard. Node-based: references stay.
  std::unordered_map<uint64_t, RepVector> shardBytes_;

  RepVector capacity_;
  std::vector<RepVector> memoryFloor_;
  /// Per position: heuristic(p).
  std::vector<double> suffixH_;
  std::vector<double> opFloor_;
  /// Per position p: Σ over positions >= p of opFloor (n + 1 entries).
  std::vector<double> floorSuffix_;
};

} // namespace synth
} // namespace weft

#endif // WEFT_SYNTH_SEARCHSPACE_H
