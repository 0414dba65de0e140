//===- PlanEvaluator.h - The evaluator's walk over a plan ---------*- C++
//-*-===//
//
// Private to lib/Eval: per-device accumulators for the current step and for
// memory, filled while walking the plan's function in order
// (Evaluator.cpp), by parameter strategy (ParameterCost.cpp) and composed
// into the step time (StepComposition.cpp). docs/Evaluator.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EVAL_PLANEVALUATOR_H
#define WEFT_LIB_EVAL_PLANEVALUATOR_H

#include "CollectivePricer.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Spmd/Duals.h"
#include "weft/Spmd/RecomputeRun.h"
#include "llvm/ADT/DenseSet.h"
#include <algorithm>
#include <numeric>

namespace weft::eval {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;
using spmd::Collective;
using spmd::DistAttr;
using spmd::LocalOp;
using spmd::ParameterOp;

using Shape = llvm::SmallVector<int64_t, 4>;

/// Per-device accumulators of the step being built.
struct StepAccumulator {
  /// `onceSync` is the part of `sync` that runs once per step under
  /// gradient accumulation (replicated and ZeRO-1 parameters).
  std::vector<double> forward, backward, comm, sync, onceSync, dual;
  explicit StepAccumulator(unsigned n)
      : forward(n), backward(n), comm(n), sync(n), onceSync(n), dual(n) {}
  bool empty() const {
    auto zero = [](const std::vector<double> &v) {
      return llvm::all_of(v, [](double x) { return x == 0; });
    };
    return zero(forward) && zero(backward) && zero(comm);
  }
};

inline double maxOf(const std::vector<double> &v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

class PlanEvaluator {
public:
  /// `microBatches`: the module's `spmd.micro_batches` (gradient
  /// accumulation; docs/Evaluator.md).
  PlanEvaluator(const MeshLayout &layout, const ClusterSpec &spec,
                const EvalOptions &options, int64_t microBatches = 1)
      : layout(layout), spec(spec), options(options),
        microBatches(microBatches),
        pricer(spec, options.profile, options.collectives),
        n(layout.numDevices()), reps(layout.representatives()), step(n),
        counts(n), kept(n), transient(n), optimizerElements(n), afterUpdate(n),
        runBytes(n) {}

  llvm::Error run(mlir::func::FuncOp func);
  PlanEstimate finish();

private:
  /// Bytes of one element of `type` as it moves between devices.
  double elementBytes(RankedTensorType type) const {
    if (type.getElementType().isa<mlir::FloatType>())
      return bytesPerElement(options.dtype);
    return std::max(1u, type.getElementTypeBitWidth() / 8);
  }
  /// Bytes of `value`'s shard on device `d`.
  double shardBytes(Value value, DistAttr dist, unsigned d) const {
    auto type = value.getType().cast<RankedTensorType>();
    Shape s = layout.shardShape(type, dist, d);
    return elementBytes(type) *
           double(std::accumulate(s.begin(), s.end(), int64_t(1),
                                  std::multiplies<int64_t>()));
  }
  DistAttr distOf(Value v) const {
    DistAttr d = spmd::getDist(v);
    return d ? d : DistAttr::replicated(v.getContext(), layout.numAxes());
  }

  void visitParameter(ParameterOp op);
  llvm::Error visitRelayout(Operation *op);
  void visitLocal(LocalOp op);
  /// The all-reduces inside the recipe (weft/Spmd/RecipeStats.h).
  void priceRecipeStats(LocalOp op, bool grad);
  void visitTopLevelGraphOp(Operation *op);
  /// Prices the graph ops of a region (or one op) on every device given
  /// the shard shapes of the region's inputs and yielded results.
  void priceCompute(Operation *op, mlir::Region *region, bool backward);
  /// Prices `kind` along `axes` for every representative; `bytesOf(d)` is
  /// representative d's contribution. Adds to `into` (per device).
  void priceAlong(Collective kind, AxisMask axes,
                  llvm::function_ref<double(unsigned)> bytesOf,
                  CollectiveVariant variant, std::vector<double> &into);
  void consume(Value v);
  void closeStep(llvm::StringRef label);

  const MeshLayout &layout;
  const ClusterSpec &spec;
  const EvalOptions &options;
  int64_t microBatches;
  CollectivePricer pricer;
  unsigned n;
  /// One device per orbit (MeshLayout::representatives): only these are
  /// priced; per-device vectors hold zero for the others.
  llvm::ArrayRef<unsigned> reps;
  StepAccumulator step;
  PlanEstimate out;
  std::vector<MemoryCounts> counts;
  std::vector<double> kept, transient, optimizerElements, afterUpdate;
  /// Recomputation (docs/Synthesis.md): the open run's saved bytes per
  /// device, and whether the local being priced recomputes.
  std::vector<double> runBytes;
  spmd::RecomputeRun runs;
  bool recomputing = false;
  /// Closes the open run: its saved tensors are a transient.
  void closeRun() {
    for (unsigned d : reps)
      transient[d] = std::max(transient[d], runBytes[d]);
    runBytes.assign(n, 0);
  }
  /// Values whose gradient flows back (they depend on a trainable parameter).
  llvm::DenseSet<Value> needsGradient;
  /// Values that are (relayouts of) a ZeRO-3 parameter.
  llvm::DenseSet<Value> zero3Values;
  /// Gradient sync of a parameter, per device, charged to the step of its
  /// first use.
  llvm::DenseMap<Value, std::vector<double>> pendingSync;
  /// Values whose pending sync runs once per step, not once per
  /// micro-batch (replicated and ZeRO-1 parameters and their relayouts).
  llvm::DenseSet<Value> onceSyncValues;
  /// Charges `sync` (per device) to the current step.
  void chargeSync(const std::vector<double> &sync, bool once) {
    for (unsigned d : reps) {
      step.comm[d] += sync[d];
      step.sync[d] += sync[d];
      if (once)
        step.onceSync[d] += sync[d];
    }
  }
};

} // namespace weft::eval

#endif // WEFT_LIB_EVAL_PLANEVALUATOR_H
