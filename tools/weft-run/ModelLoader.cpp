//===- ModelLoader.cpp - A graph program from ONNX or .mlir ---------------===//

#include "ModelLoader.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "weft/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

using namespace weft;

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
weft::parseModuleFile(mlir::MLIRContext &context, llvm::StringRef path,
                      llvm::StringRef what) {
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (message.empty()) {
      llvm::raw_string_ostream os(message);
      os << diag.getLocation() << ": " << diag.str();
    }
    return mlir::success();
  });
  llvm::SourceMgr sources;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, sources, &context);
  if (!module)
    return badInput("cannot load {0}'{1}': {2}",
                    what.empty() ? "" : (what + " ").str(), path,
                    message.empty() ? "unreadable file" : message);
  return module;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
weft::loadGraphProgram(mlir::MLIRContext &context, llvm::StringRef path,
                       const ImportOptions &options) {
  registerImportDialects(context);
  if (!path.endswith(".mlir"))
    return importOnnxFile(context, path, options);
  return parseModuleFile(context, path, "");
}
