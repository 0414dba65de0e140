//===- Explain.h - weftc --explain ---------------------------------*- C++
//-*-===//
//
// The per-op table of a plan: for every step (an spmd.local and the
// collectives that bring its inputs in) the graph op, its variant on each
// mesh axis, the distributions in and out, each collective with why it is
// there (which distribution it turns into which), its bytes and time, and
// the step's time on the slowest device; then the steps that cost most.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_EXPLAIN_H
#define WEFT_TOOLS_WEFTC_EXPLAIN_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Eval/Evaluator.h"
#include "llvm/Support/raw_ostream.h"

namespace weft {

/// Prints the table and the `top` largest steps of `plan` (estimate from
/// evaluatePlan on the same plan).
void printExplain(mlir::ModuleOp plan, const PlanEstimate &estimate,
                  llvm::raw_ostream &os, unsigned top = 5);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_EXPLAIN_H
