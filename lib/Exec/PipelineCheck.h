//===- PipelineCheck.h - Verify a pipelined plan against its model -*- C++
//-*-===//
//
// checkPlan's path for pipelined plans (docs/Pipeline.md): every stage runs
// on its sub-mesh, M micro-batches in the schedule's order, values and
// gradients crossing stages through send/recv; the loss and the parameter
// gradients accumulated over the micro-batches are compared with the
// reference run on the same M micro-batches.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_PIPELINECHECK_H
#define WEFT_LIB_EXEC_PIPELINECHECK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Exec/PlanCheck.h"

namespace weft::exec {

/// The stage order of a schedule: per stage, the micro-batch steps it
/// runs, forward (`backward` false) or backward, in order.
struct PipelineStep {
  int64_t microBatch = 0;
  bool backward = false;
};
std::vector<std::vector<PipelineStep>>
pipelineSchedule(llvm::StringRef schedule, int64_t stages, int64_t micro);

/// Checks the pipelined `plan` against the graph program's `main` (one
/// micro-batch's shapes).
llvm::Expected<PlanCheckResult> checkPipeline(mlir::func::FuncOp main,
                                              mlir::ModuleOp plan,
                                              const PlanCheckOptions &options);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_PIPELINECHECK_H
