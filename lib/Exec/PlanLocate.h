//===- PlanLocate.h - Where a plan first differs from its model -*- C++ -*-===//
//
// Run only when checkPlan's verdict is "differs": the first forward value of
// the plan that differs from the reference, else the first op whose own
// backward computation differs (docs/Exec.md, "Comparison").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_PLANLOCATE_H
#define WEFT_LIB_EXEC_PLANLOCATE_H

#include "PlanMatch.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/PlanCheck.h"
#include "weft/Exec/SpmdInterpreter.h"
#include "llvm/ADT/DenseSet.h"
#include <optional>

namespace weft::exec {

/// max |a − b| and the first element with |a − b| > atol + rtol·|b| (+ the
/// extra tolerance `slack`), over the flat range [begin, end).
struct Diff {
  double maxAbs = 0;
  int64_t first = -1;
  double got = 0, want = 0;
};
Diff compareTensors(const Tensor &a, const Tensor &b, double rtol, double atol,
                    double slack = 0, int64_t begin = 0, int64_t end = -1);

/// The first forward value of the plan (program order, per result and
/// device, partial values combined) that differs from the reference's box.
std::optional<PlanMismatch> firstForwardMismatch(mlir::func::FuncOp planMain,
                                                 const PlanMatcher &matcher,
                                                 const GraphInterpreter &ref,
                                                 const SpmdInterpreter &spmd,
                                                 const PlanCheckOptions &opts);

/// The reference's reverse pass keeping everything: each value's gradient
/// and what each op's backward adds to each operand's.
struct ReferenceBackward {
  llvm::DenseMap<mlir::Value, Tensor> grads;
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, Tensor> contributions;
  /// Values that carry a gradient (float, depending on a parameter).
  llvm::DenseSet<mlir::Value> needs;
};
llvm::Expected<ReferenceBackward>
referenceBackward(mlir::func::FuncOp main, const GraphInterpreter &ref);

/// Walking the plan in reverse, the first op whose backward adds to an
/// operand's gradient something other than the reference does (`spmd` ran
/// with keepGradients). The gradients reaching that op agree (they are the
/// sums of what the later ops added), so that op's own computation
/// differs. Comparisons are per device, partial sums added over the id axes.
std::optional<PlanMismatch> firstBackwardMismatch(mlir::func::FuncOp planMain,
                                                  const PlanMatcher &matcher,
                                                  const ReferenceBackward &ref,
                                                  const SpmdInterpreter &spmd,
                                                  const PlanCheckOptions &opts);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_PLANLOCATE_H
