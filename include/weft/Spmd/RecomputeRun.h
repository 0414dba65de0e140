//===- RecomputeRun.h - Runs of recomputing locals in a plan ----*- C++ -*-===//
//
// docs/Synthesis.md "Recomputation". The one statement of which values a
// recomputing `spmd.local` keeps, read by the one plan walk of lib/Eval
// (weft/Eval/PlanWalk.h: the evaluator and the ratio problem); the search
// (lib/Synth) applies the same rules to its states (a run tag on held sets).
//
// Walking a plan in order: a local with `recompute` and a gradient joins the
// open run; a local without a gradient leaves it open (it has no backward
// pass); any other local closes it. A recomputing local keeps (as
// checkpoints) its inputs that are neither leaf-derived (program inputs,
// parameters and relayouts of them) nor results of a recomputing local of
// the open run used as produced (a relayout result is a new value, outside
// the run). The run's saved tensors are live together while it is
// recomputed, so a closed run's total is a transient.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_RECOMPUTERUN_H
#define WEFT_SPMD_RECOMPUTERUN_H

#include "Spmd/IR/SpmdOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace weft::spmd {

class RecomputeRun {
public:
  enum class Effect { Join, Close, Neutral };
  /// Visits `op` (a local, `grad` when a gradient flows through it). Join:
  /// it recomputes, and `checkpoints` gets the distinct inputs it keeps.
  /// Close: the caller ends the open run (its saved bytes become a
  /// transient). Neutral: no backward pass, the run stays open.
  Effect visit(LocalOp op, bool grad,
               llvm::SmallVectorImpl<mlir::Value> &checkpoints);
  /// visit() for a pricer: calls `closeRun()` on Close and `keep(input)`
  /// per checkpoint; returns whether `op` recomputes.
  template <typename CloseRun, typename Keep>
  bool price(LocalOp op, bool grad, CloseRun closeRun, Keep keep) {
    llvm::SmallVector<mlir::Value, 4> checkpoints;
    Effect effect = visit(op, grad, checkpoints);
    if (effect == Effect::Close)
      closeRun();
    for (mlir::Value in : checkpoints)
      keep(in);
    return effect == Effect::Join;
  }

  /// A program input, a parameter, or a relayout of one.
  static bool leafDerived(mlir::Value v);

private:
  llvm::DenseSet<mlir::Value> inRun;
};

} // namespace weft::spmd

#endif // WEFT_SPMD_RECOMPUTERUN_H
