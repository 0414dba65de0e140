//===- OnnxImport.cpp - Entry point of the ONNX importer ------------------===//

#include "weft/Import/OnnxImport.h"
#include "Graph/IR/GraphDialect.h"
#include "Graph/Transforms/Passes.h"
#include "Importer.h"
#include "OnnxModel.h"
#include "ZeroSizeInputs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace weft;
using namespace weft::import;

const HandlerTable &import::legalizationTable() {
  static const HandlerTable table = [] {
    HandlerTable t;
    registerMathHandlers(t);
    registerNNHandlers(t);
    registerShapeHandlers(t);
    registerResampleHandlers(t);
    registerScatterHandlers(t);
    registerDecomposeHandlers(t);
    return t;
  }();
  return table;
}

void weft::registerImportDialects(mlir::MLIRContext &context) {
  context.loadDialect<graph::GraphDialect, mlir::func::FuncDialect>();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
weft::importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
                     const ImportOptions &options, ImportReport *report) {
  registerImportDialects(context);
  ImportReport local;
  ImportReport &r = report ? *report : local;
  onnx::ModelProto model;
  if (auto err = readOnnxModel(path, model))
    return std::move(err);
  auto resolved = withZeroSizeInputs(model, options, r);
  if (!resolved)
    return resolved.takeError();
  if (auto err = prepareOnnxModel(model, *resolved, r, path))
    return std::move(err);
  GraphImporter importer(context, model, *resolved, r, path);
  auto module = importer.run();
  if (module && options.fuse)
    for (auto func : (*module)->getOps<mlir::func::FuncOp>())
      r.fusedGelus += graph::fuseGelu(func);
  return module;
}
