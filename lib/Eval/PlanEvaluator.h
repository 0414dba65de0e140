//===- PlanEvaluator.h - The plan walk priced in seconds ----------*- C++
//-*-===//
//
// Private to lib/Eval: the evaluator's Domain of eval::PlanWalk. Per-device
// accumulators for the current step and for memory, filled by the walk
// (Evaluator.cpp) and composed into the step time (StepComposition.cpp).
// docs/Evaluator.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EVAL_PLANEVALUATOR_H
#define WEFT_LIB_EVAL_PLANEVALUATOR_H

#include "weft/Eval/PlanWalk.h"
#include <algorithm>

namespace weft {
struct StepEvents;
} // namespace weft

namespace weft::eval {

class StepRecorder;

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

/// Bytes and seconds are plain numbers.
class PlanEvaluator : public DomainBase<double, double> {
public:
  /// Priced per micro-batch, `microBatches` times a step (the module's
  /// `spmd.micro_batches`; docs/Evaluator.md).
  PlanEvaluator(const MeshLayout &layout, const ClusterSpec &spec,
                const EvalOptions &options, int64_t microBatches = 1)
      : DomainBase(layout, spec, options), microBatches(microBatches),
        pricer(spec, options.profile, options.collectives), step(n),
        forwardSlot(n), dualSlot(n), counts(n), kept(n), transient(n),
        optimizerElements(n), afterUpdate(n), runBytes(n) {}

  llvm::Error run(mlir::func::FuncOp func);
  PlanEstimate finish();

  // The Domain of PlanWalk (weft/Eval/PlanWalk.h).
  double bytesOf(mlir::Value value, spmd::DistAttr dist, unsigned d) const {
    return elementsOf(value.getType().cast<mlir::RankedTensorType>(), dist, d) *
           elementBytes(value.getType().cast<mlir::RankedTensorType>(),
                        options.dtype);
  }
  double elementsOf(mlir::RankedTensorType type, spmd::DistAttr dist,
                    unsigned d) const;
  static double syncBytes(double elements, const StrategyCost &cost) {
    return cost.syncBytes(elements);
  }
  static double afterUpdateBytes(double elements, const StrategyCost &cost) {
    return cost.afterUpdateBytes(elements);
  }
  double recipeBytes(spmd::LocalOp op, const spmd::RecipeStat &stat, unsigned d,
                     double elementBytes) const;
  double collectiveTime(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
                        llvm::ArrayRef<double> bytes,
                        CollectiveVariant variant) {
    return pricer.seconds(kind, group, bytes, variant);
  }
  static void addTime(double &into, double t) { into += t; }
  Times &slot(Slot s);
  void relayoutPriced(mlir::Operation *op, unsigned axis,
                      llvm::ArrayRef<double> fwdBytes);
  void recipePriced();
  void holdParameter(unsigned d, double elements, const StrategyCost &cost);
  static void adjustSync(Times &, bool) {}
  void chargeSync(const Times &sync, bool once);
  void keep(unsigned d, double bytes) { kept[d] += bytes; }
  void transientBytes(unsigned d, double bytes) {
    transient[d] = std::max(transient[d], bytes);
  }
  void closeRun();
  bool compute(mlir::Operation *op, mlir::Region *region, bool backward,
               bool recomputing);
  void closeStep(llvm::StringRef label);

  /// When set, every priced figure is also handed to it (StepRecorder.h).
  StepRecorder *recorder = nullptr;

private:
  int64_t microBatches;
  CollectivePricer pricer;
  StepAccumulator step;
  /// A relayout's (or recipe all-reduce's) forward and dual times, zero
  /// between two of them.
  Times forwardSlot, dualSlot;
  PlanEstimate out;
  std::vector<MemoryCounts> counts;
  std::vector<double> kept, transient, optimizerElements, afterUpdate;
  /// Recomputation (docs/Synthesis.md): the open run's saved bytes per
  /// device.
  std::vector<double> runBytes;
};

/// evaluatePlan; with `events`, the priced figures laid out as events too
/// (weft/Eval/StepEvents.h).
llvm::Expected<PlanEstimate> evaluate(mlir::ModuleOp module,
                                      const ClusterSpec &spec,
                                      const EvalOptions &options,
                                      StepEvents *events);

/// evaluatePlan of a pipelined plan (docs/Evaluator.md, "Pipelined
/// plans"): every stage module evaluated for one micro-batch on its nodes,
/// the transfers between stages, the schedule's step and memory.
llvm::Expected<PlanEstimate> evaluatePipelined(mlir::ModuleOp module,
                                               const ClusterSpec &spec,
                                               const EvalOptions &options);

/// A pipelined plan's estimate (evaluatePipelined) laid out as the
/// schedule's blocks, one lane per stage (docs/Evaluator.md).
StepEvents pipelineEvents(mlir::ModuleOp module, const PlanEstimate &estimate,
                          const ClusterSpec &spec);

} // namespace weft::eval

#endif // WEFT_LIB_EVAL_PLANEVALUATOR_H
