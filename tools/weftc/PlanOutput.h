//===- PlanOutput.h - Writing plan files --------------------------*- C++
//-*-===//
//
// A plan is written as plan.mlir (the spmd program) and plan.json
// (docs/PlanFormat.md) side by side, each atomically (weft/Support/
// FileOutput.h: every file weftc writes goes through writeFile), with the
// program that runs it (torch/, launch/).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_PLANOUTPUT_H
#define WEFT_TOOLS_WEFTC_PLANOUTPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "weft/Support/FileOutput.h"
#include "llvm/Support/Error.h"

namespace weft {

/// Creates `dir` and writes `dir`/plan.mlir and `dir`/plan.json.
llvm::Error writePlanFiles(llvm::StringRef dir, mlir::ModuleOp plan,
                           const ClusterSpec &spec,
                           const PlanEstimate &estimate,
                           const PlanContext &context);

/// Writes what runs the plan beside it: `dir`/torch/ (the per-rank PyTorch
/// program and its runtime, weft/Emit/TorchProgram.h) and `dir`/launch/
/// (torchrun, local and Slurm scripts, weft/Emit/Launch.h); `graph` is the
/// program the plan was made from (input names, weights).
llvm::Error writeRunnableFiles(llvm::StringRef dir, mlir::ModuleOp plan,
                               mlir::ModuleOp graph, llvm::StringRef title);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_PLANOUTPUT_H
