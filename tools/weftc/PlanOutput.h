//===- PlanOutput.h - Writing plan files --------------------------*- C++
//-*-===//
//
// Every file weftc writes goes through writeFile (one-line error when the
// file cannot be written); a plan is written as plan.mlir (the spmd
// program) and plan.json (docs/PlanFormat.md) side by side.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_PLANOUTPUT_H
#define WEFT_TOOLS_WEFTC_PLANOUTPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "llvm/Support/Error.h"

namespace weft {

/// Writes `path` through `write`; bad input (exit 1) when it cannot.
llvm::Error writeFile(llvm::StringRef path,
                      llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Creates `dir` and writes `dir`/plan.mlir and `dir`/plan.json.
llvm::Error writePlanFiles(llvm::StringRef dir, mlir::ModuleOp plan,
                           const ClusterSpec &spec,
                           const PlanEstimate &estimate,
                           const PlanContext &context);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_PLANOUTPUT_H
