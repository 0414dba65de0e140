//===- ModelLoader.h - A graph program from ONNX or .mlir -------*- C++ -*-===//

#ifndef WEFT_TOOLS_WEFTRUN_MODELLOADER_H
#define WEFT_TOOLS_WEFTRUN_MODELLOADER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// Parses and verifies an spmd plan (`plan.mlir`): bad input (exit 1) for
/// an unreadable file, a plan that does not verify or an unknown format
/// version.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
loadPlan(mlir::MLIRContext &context, llvm::StringRef path);

/// `err` with "FILE: " before its message, keeping its exit code.
llvm::Error inFile(llvm::StringRef file, llvm::Error err);

/// The model's inputs, parameters and buffers must fit this process's
/// memory (physical memory, or a lower address-space limit) with room for
/// activations; otherwise the run would end on an allocation failure or an
/// OOM kill. Bad input naming the model, its bytes and the memory.
llvm::Error checkFitsMemory(mlir::func::FuncOp main, llvm::StringRef model);

} // namespace weft

#endif // WEFT_TOOLS_WEFTRUN_MODELLOADER_H
