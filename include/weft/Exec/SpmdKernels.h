//===- SpmdKernels.h - Shards, collectives and local recipes ------*- C++
//-*-===//
//
// The pieces the spmd interpreter is built from: moving boxes of a global
// tensor between shards, collectives over groups of mesh devices, and the
// per-device execution of one `spmd.local` (its graph op cloned with shard
// types, plus the special recipes of docs/ShardingRules.md that talk to
// the other devices of an axis).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_SPMDKERNELS_H
#define WEFT_EXEC_SPMDKERNELS_H

#include "Graph/IR/GraphInterfaces.h"
#include "mlir/IR/Operation.h"
#include "weft/Exec/SpmdInterpreter.h"
#include "weft/Exec/Tensor.h"
#include "weft/Spmd/ShardGeometry.h"

namespace weft::exec {

/// How pieces are merged into a destination.
enum class Combine { Copy, Add, Max };

/// Merges the part of `src` (covering `srcBox` of the global tensor) that
/// lies in `dstBox` into `dst` (covering `dstBox`).
void transferBox(const Tensor &src, const spmd::ShardBox &srcBox, Tensor &dst,
                 const spmd::ShardBox &dstBox, Combine how);

/// The piece `box` of a whole tensor.
Tensor extractBox(const Tensor &whole, const spmd::ShardBox &box);

/// How a collective builds each device's result.
enum class Exchange {
  /// From the device's own input only (spmd.shard; the zero-padding dual).
  Own,
  /// Overwrite from the pieces of the group along the axes (all_gather,
  /// all_to_all).
  Copy,
  /// Sum (reduce_scatter, all_reduce of sums) or maximum of the group's
  /// pieces.
  Add,
  Max,
};

/// Per-device results of a relayout from `from` to `to` of a value of
/// global `shape`: device x's result covers its box under `to` and is built
/// from the inputs of the devices of its group along `axes` (from its own
/// input for Exchange::Own). Parts no input covers are zero.
std::vector<Tensor> exchange(const spmd::ShardGeometry &geometry,
                             llvm::ArrayRef<int64_t> shape, ElementType type,
                             llvm::ArrayRef<Tensor> in, spmd::DistAttr from,
                             spmd::DistAttr to, spmd::MeshAxes axes,
                             Exchange how);

/// The first device whose result `exchange` cannot build from what it may
/// read, or none: for Exchange::Own the new box must lie within the device's
/// own box (a slice) or contain it (zero-padding); otherwise the group's
/// boxes along `axes` must cover it. A dim split on several axes is nested
/// only when split major axis first and gathered minor axis first
/// (ShardGeometry orders its pieces axis 0 major); another order asks a
/// device for rows no member of its group holds, which no collective can
/// give.
std::optional<unsigned> unreachableDevice(const spmd::ShardGeometry &geometry,
                                          llvm::ArrayRef<int64_t> shape,
                                          spmd::DistAttr from,
                                          spmd::DistAttr to,
                                          spmd::MeshAxes axes, Exchange how);

/// "[0:3, 2:5]": a box's ranges per dim.
std::string boxString(const spmd::ShardBox &box);

/// Every device's vector replaced by the sum (or maximum) over its group
/// along `axes` (vectors of one group have equal lengths).
void allReduceStats(const spmd::ShardGeometry &geometry,
                    std::vector<std::vector<double>> &stats,
                    spmd::MeshAxes axes, bool max);

/// The value of `v` combined over the partial axes of its distribution, on
/// device `d` (the shard itself when nothing is partial).
Tensor combinedShard(const spmd::ShardGeometry &geometry, const DistValue &v,
                     unsigned d);

/// The whole value of `v` (global `shape`) from its shards, each combined
/// over the partial axes; where devices hold the same element, the
/// lowest-numbered one's.
Tensor wholeOf(const spmd::ShardGeometry &geometry, const DistValue &v,
               llvm::ArrayRef<int64_t> shape);

/// One spmd.local prepared for execution.
struct LocalStep {
  mlir::Operation *local = nullptr;
  /// The graph op of the region.
  mlir::Operation *inner = nullptr;
  /// The variant run on each mesh axis.
  llvm::SmallVector<graph::ShardingVariant, 4> variants;
  /// Per operand: the axes on which it is a once-operand (zeroed on devices
  /// whose coordinate there is not 0).
  llvm::SmallVector<spmd::MeshAxes, 4> onceAxes;
  /// Axes of recipes that reduce over a split dim with internal
  /// all-reduces or global offsets (split-reduced, split-normalized,
  /// split-batch-sync-stats, split-classes, split-vocab).
  spmd::MeshAxes reducedAxes = 0;
  /// Axes on which a loss is split-batch.
  spmd::MeshAxes batchAxes = 0;
  enum class Special {
    None,
    Softmax,
    LogSoftmax,
    LayerNorm,
    BatchNorm,
    Loss,
    GatherVocab,
    ReduceMean,
    Constant,
  };
  Special special = Special::None;
  /// Ordinal among dropout ops (the reference's).
  uint64_t dropoutId = 0;
  /// The graph op cloned with each device's shard types (detached ops).
  std::vector<mlir::Operation *> clones;
  /// A loss's per-device log-sum-exps from the forward pass and the logits
  /// they were computed from (the backward reuses them).
  std::vector<std::vector<double>> lseCache;
  std::vector<const float *> lseInputs;
  /// Distributions of the graph op's operands and results.
  llvm::SmallVector<spmd::DistAttr, 4> operandDists, resultDists;
};

/// `dist` with the entries outside `keep` replaced by `id`: the layout a
/// recipe sees along the axes whose rule asks for offsets (a plan whose
/// distributions disagree with its rules then computes what the rules say).
spmd::DistAttr restrictDist(spmd::DistAttr dist, spmd::MeshAxes keep);

/// Per device, one pointer per operand (or result, or result gradient).
using DeviceTensors = std::vector<llvm::SmallVector<const Tensor *, 4>>;

/// Checks every clone with the op's verifier: the shards the plan gives the
/// op fit it (exit code 3 naming the op and device otherwise).
llvm::Error verifyLocalClones(LocalStep &step);

/// The recipes that talk to other devices of an axis (step.special), on
/// every device at once: forward fills one vector of results per device,
/// backward one vector of operand gradients per device (invalid tensors
/// where an operand has none).
llvm::Error specialForward(LocalStep &step, const spmd::ShardGeometry &geometry,
                           const DeviceTensors &in,
                           std::vector<llvm::SmallVector<Tensor, 2>> &out);
llvm::Error specialBackward(LocalStep &step,
                            const spmd::ShardGeometry &geometry,
                            const DeviceTensors &in, const DeviceTensors &res,
                            const DeviceTensors &dres,
                            std::vector<llvm::SmallVector<Tensor, 4>> &din);

/// Resolves the variants of `local` (convention 1: one name per mesh axis
/// joined by ", "; of several rules of one name, the one fitting the
/// distributions) and builds
/// the per-device clones, whose operands are arguments of `scratch`.
llvm::Error prepareLocal(LocalStep &step, const spmd::ShardGeometry &geometry,
                         mlir::Block &scratch);

/// Runs the local step on every device.
llvm::Error runLocalForward(LocalStep &step,
                            const spmd::ShardGeometry &geometry,
                            llvm::ArrayRef<const DistValue *> operands,
                            uint64_t seed,
                            llvm::SmallVectorImpl<DistValue> &results);

/// The backward of a local step: `resultGrads[r]` holds per-device
/// gradients of result r (empty: none); fills one vector per operand
/// (empty: no gradient).
llvm::Error
runLocalBackward(LocalStep &step, const spmd::ShardGeometry &geometry,
                 llvm::ArrayRef<const DistValue *> operands,
                 llvm::ArrayRef<const DistValue *> results,
                 llvm::ArrayRef<const std::vector<Tensor> *> resultGrads,
                 uint64_t seed,
                 llvm::SmallVectorImpl<std::vector<Tensor>> &operandGrads);

} // namespace weft::exec

#endif // WEFT_EXEC_SPMDKERNELS_H
