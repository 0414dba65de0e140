//===- PlanRun.h - weft-run --plan: verify an spmd plan -----------*- C++
//-*-===//

#ifndef WEFT_TOOLS_WEFTRUN_PLANRUN_H
#define WEFT_TOOLS_WEFTRUN_PLANRUN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Exec/PlanCheck.h"
#include "llvm/Support/Error.h"

namespace weft {

/// The number of mesh devices of a loaded plan.
llvm::Expected<unsigned> planDevices(mlir::ModuleOp plan);

/// A dual table with one row replaced: `spec` is `OP=COLLECTIVE` (e.g.
/// `spmd.shard=all_gather`), the backward of OP becoming COLLECTIVE. For
/// tests that a wrong dual is caught.
llvm::Expected<exec::DualLookup> overriddenDuals(llvm::StringRef spec);

/// Runs the check and prints the report (with `perParameter`, the
/// difference of every parameter's gradient); returns the exit code.
int runPlanCheck(llvm::StringRef modelName, llvm::StringRef planPath,
                 mlir::ModuleOp graph, mlir::ModuleOp plan,
                 const exec::PlanCheckOptions &options, bool perParameter);

} // namespace weft

#endif // WEFT_TOOLS_WEFTRUN_PLANRUN_H
