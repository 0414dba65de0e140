//===- ModelLoader.h - A graph program from ONNX or .mlir -------*- C++ -*-===//

#ifndef WEFT_TOOLS_WEFTRUN_MODELLOADER_H
#define WEFT_TOOLS_WEFTRUN_MODELLOADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Import/OnnxImport.h"
#include "llvm/Support/Error.h"

namespace weft {

/// Parses the MLIR module in `path`; bad input (exit 1) naming `what`, the
/// file and the first diagnostic when it cannot.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseModuleFile(mlir::MLIRContext &context, llvm::StringRef path,
                llvm::StringRef what);

/// Loads `path`: a graph program (`.mlir`, parsed and verified) or an ONNX
/// model (`.onnx`, `.onnxtext`, imported with `options`).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
loadGraphProgram(mlir::MLIRContext &context, llvm::StringRef path,
                 const ImportOptions &options);

} // namespace weft

#endif // WEFT_TOOLS_WEFTRUN_MODELLOADER_H
