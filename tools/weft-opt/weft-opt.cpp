//===- weft-opt.cpp - Weft's pass driver ----------------------------------===//
//
// MlirOptMain with only the dialects and passes Weft uses.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/Transforms/Passes.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/Transforms/Passes.h"
#include "Spmd/Transforms/Pipeline.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  weft::graph::registerGraphPasses();
  weft::spmd::registerSpmdPasses();
  weft::spmd::registerSynthesisPipeline();

  mlir::DialectRegistry registry;
  registry.insert<weft::graph::GraphDialect, weft::spmd::SpmdDialect,
                  mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Weft optimizer driver\n", registry));
}
