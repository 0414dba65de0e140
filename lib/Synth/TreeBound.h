//===- TreeBound.h - A SearchSpace's admissible bounds ---------*- C++ -*-===//
//
// docs/Synthesis.md "Tree bound" and "State bound": the op cost floors, the
// tree bound built once with the space, and the same bound charged from
// what a state holds. One object per SearchSpace (its friend); the
// searches reach it through SearchSpace::heuristic, blockBound and
// relayBound. The memo tables fill on first use.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_TREEBOUND_H
#define WEFT_LIB_SYNTH_TREEBOUND_H

#include "weft/Synth/SearchSpace.h"
#include <optional>
#include <vector>

namespace weft::synth {

class TreeBound {
public:
  explicit TreeBound(SearchSpace &s) : s(s) {}

  /// The op cost floors (SearchSpace::opFloor) and the tree bound, raising
  /// the space's heuristic(p) to them. Skipped, leaving the compute bound,
  /// when no plan fits memory: such a space is never searched with memory
  /// pruning.
  void build();

  /// SearchSpace::heuristic(p, key).
  double heuristic(unsigned p, const StateKey &key);
  /// SearchSpace::blockBound.
  double blockBound(unsigned p, unsigned b, const StateKey &key);
  /// SearchSpace::relayBound.
  double relayBound(unsigned value, DistId from, DistId to, unsigned by);

private:
  /// Per option of op p: the least step() cost over its storage choices
  /// from the most favourable state, every operand held as the option needs
  /// it (so only compute, the recipe's all-reduces, the storage's sync and
  /// gathers and the optimizer update remain); infinity when impossible.
  /// Fills spread[p] too.
  std::vector<double> exactNodeCosts(unsigned p);
  /// The forest and the least cost of each subtree per option.
  void buildTree(const std::vector<std::vector<double>> &nodeCost);

  /// Per op, per value it uses: its options grouped by what they need of
  /// the value (one distribution per slot holding it).
  struct Needs {
    llvm::SmallVector<DistId, 2> dists;
    llvm::SmallVector<uint32_t, 4> options;
  };
  /// Per distribution a use may need of a value, per such use (ascending)
  /// its position, share and the largest spread of its options needing it.
  struct Claim {
    unsigned use;
    double share, spread;
  };
  using Claims = llvm::DenseMap<DistId, llvm::SmallVector<Claim, 2>>;

  /// The least the uses of `value` from index `k` on still cost from
  /// `held`: its tree consumers' subtrees chosen together with the dearest
  /// relayout any of them or of its other uses needs (lib/Synth/StarBound.h).
  double groupBound(unsigned value, unsigned k, HeldId held);
  /// The least relayout from `held` that the use at position `use` needs.
  double useBound(unsigned value, unsigned use, HeldId held);
  const Claims &claimsOf(unsigned value);
  const std::vector<Needs> &needsOf(unsigned op, unsigned value);
  /// The least seconds of making `value` available as `want` from `held` at
  /// a use at position `by` or before (0 when held or without a
  /// precondition; infinity when impossible).
  double relayFrom(unsigned value, const SearchSpace::HeldSet &held,
                   DistId want, unsigned by);
  /// The largest relayout from `held` that one grouping of needs of the use
  /// at position `by` asks for.
  double relayAll(unsigned value, const SearchSpace::HeldSet &held,
                  llvm::ArrayRef<DistId> dists, unsigned by);

  SearchSpace &s;
  /// Each op hangs below the producer of one op-result operand; the
  /// consumers below one value are chosen together and pay its dearest
  /// relayout once. Per value: the ops whose tree edge enters through it,
  /// ascending.
  std::vector<llvm::SmallVector<unsigned, 2>> kids;
  /// Per op and option: least cost of the op's subtree at that option.
  std::vector<std::vector<double>> best;
  /// Per op: least over its options of best.
  std::vector<double> suffix;
  /// Per position: the tree bound, and the other bounds' maximum.
  std::vector<double> treeH, otherH;
  /// Per op and option: the most, over its storage choices, by which the
  /// step's communication (operands held) differs between representatives.
  std::vector<std::vector<double>> spread;
  /// Per op: the share of the step's dearest-device excess each operand
  /// slot holding an op result may claim (1 / such slots).
  std::vector<double> share;
  /// Memoised terms: (value, use index, held set) -> seconds.
  llvm::DenseMap<uint64_t, double, PackedKeyInfo> groupMemo, useMemo;
  /// Per op, per value it uses (filled on first use).
  std::vector<llvm::SmallVector<std::pair<unsigned, std::vector<Needs>>, 2>>
      needs;
  /// Per value (filled on first use).
  std::vector<std::optional<Claims>> claims;
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_TREEBOUND_H
