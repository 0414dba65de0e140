//===- StepRecorder.h - What the walk priced, kept for a timeline -*- C++
//-*-===//
//
// Private to lib/Eval: the optional sink of the evaluator's Domain
// (PlanEvaluator::recorder). As the walk prices a step it hands over each
// op's forward and backward compute, each collective with its dual, the
// gradient syncs charged to the step and, at the end, the optimizer; per
// priced device. layOut() turns that into start times (StepEvents.cpp;
// docs/Evaluator.md, "The step as events").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EVAL_STEPRECORDER_H
#define WEFT_LIB_EVAL_STEPRECORDER_H

#include "weft/Eval/MeshLayout.h"
#include "weft/Eval/StepEvents.h"

namespace mlir {
class Operation;
} // namespace mlir

namespace weft::eval {

class StepRecorder {
public:
  explicit StepRecorder(const MeshLayout &layout);

  // Per-device vectors below are indexed by mesh device (size
  // numDevices()); only the priced devices' entries are read.

  /// An op's compute (an spmd.local or a top-level graph op).
  void compute(mlir::Operation *op, const std::vector<double> &forward,
               const std::vector<double> &backward);
  /// A relayout op: its forward collective and its dual.
  void relayout(mlir::Operation *op, unsigned axis,
                const std::vector<double> &forward,
                const std::vector<double> &dual);
  /// One all-reduce inside the last computed op's recipe.
  void recipe(const std::vector<double> &forward,
              const std::vector<double> &dual);
  /// Gradient sync charged to the open step; `once`: only in the last
  /// micro-batch.
  void sync(const std::vector<double> &seconds, bool once);
  /// The open step ends (PlanEvaluator::closeStep).
  void closeStep();
  /// The optimizer update and the gathers after it.
  void optimizer(const std::vector<double> &update,
                 const std::vector<double> &afterUpdate);

  /// Start times for every recorded figure: `microBatches` forward and
  /// backward passes, then the optimizer.
  StepEvents layOut(bool overlapSync, int64_t microBatches) const;

private:
  enum class Part { Relayout, Compute, Recipe, Sync };
  /// One priced thing of a step, per priced device (index into `reps`).
  struct Item {
    Part part;
    std::string label, dualLabel;
    /// Forward-pass and backward-pass seconds (a collective's dual, an
    /// op's backward compute; a sync's seconds are `backward`).
    std::vector<double> forward, backward;
    bool once = false;
  };
  std::vector<double> pick(const std::vector<double> &perDevice) const;

  std::vector<unsigned> reps;
  StepEvents shape;
  std::vector<std::vector<Item>> steps;
  std::vector<Item> open;
  std::string lastOp;
  std::vector<double> update, afterUpdate;
};

} // namespace weft::eval

#endif // WEFT_LIB_EVAL_STEPRECORDER_H
