//===- ModelLoader.cpp - A graph program from ONNX or .mlir ---------------===//

#include "ModelLoader.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "weft/Support/Error.h"
#include "weft/Support/OpPrintingOff.h"
#include "weft/Support/Units.h"
#include "llvm/Support/SourceMgr.h"
#include <sys/resource.h>
#include <unistd.h>

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
  OpPrintingOff firstLineOnly(context);
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

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
weft::loadPlan(mlir::MLIRContext &context, llvm::StringRef path) {
  registerImportDialects(context);
  context.getOrLoadDialect<spmd::SpmdDialect>();
  context.loadAllAvailableDialects();
  return parseModuleFile(context, path, "plan");
}

llvm::Error weft::inFile(llvm::StringRef file, llvm::Error err) {
  return llvm::handleErrors(std::move(err), [&](WeftError &e) -> llvm::Error {
    return llvm::make_error<WeftError>(e.getCode(),
                                       (file + ": " + e.getMessage()).str());
  });
}

llvm::Error weft::checkFitsMemory(mlir::func::FuncOp main,
                                  llvm::StringRef model) {
  auto bytesOf = [](mlir::Type type) {
    auto tensor = type.dyn_cast<mlir::RankedTensorType>();
    if (!tensor || !tensor.hasStaticShape())
      return 0.0;
    unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
    return double(tensor.getNumElements()) * std::max(bits, 8u) / 8;
  };
  double bytes = 0;
  for (mlir::Type type : main.getArgumentTypes())
    bytes += bytesOf(type);
  main.walk([&](mlir::Operation *op) {
    if (op->getNumOperands() == 0)
      for (mlir::Type type : op->getResultTypes())
        bytes += bytesOf(type);
  });
  double memory = double(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    memory = std::min(memory, double(limit.rlim_cur));
  if (memory > 0 && bytes > memory / 2)
    return badInput("{0}: the model's inputs, parameters and buffers take {1}, "
                    "more than half of the {2} this process may use (weft-run "
                    "runs the whole model on the CPU)",
                    model, formatBytes(bytes), formatBytes(memory));
  return llvm::Error::success();
}
