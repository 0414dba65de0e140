//===- PassSupport.h - Cluster and evaluator options of the passes -*- C++
//-*-===//

#ifndef WEFT_SPMD_TRANSFORMS_PASSSUPPORT_H
#define WEFT_SPMD_TRANSFORMS_PASSSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "llvm/Support/Error.h"

namespace weft::spmd {

/// Loads `clusterPath` and parses `dtype`; bad input names the option.
llvm::Expected<ClusterSpec> loadPassCluster(llvm::StringRef clusterPath,
                                            llvm::StringRef dtype,
                                            EvalOptions &options);

/// Emits `err` on `module` as one error line (the exit-code category is
/// lost: MLIR passes fail with exit code 1).
void emitPassError(mlir::ModuleOp module, llvm::StringRef pass,
                   llvm::Error err);

/// The evaluator's step time of `module` in seconds (NaN when it fails).
double stepSeconds(mlir::ModuleOp module, const ClusterSpec &spec,
                   const EvalOptions &options);

} // namespace weft::spmd

#endif // WEFT_SPMD_TRANSFORMS_PASSSUPPORT_H
