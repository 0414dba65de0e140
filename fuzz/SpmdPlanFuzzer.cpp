//===- SpmdPlanFuzzer.cpp - spmd plan text, verified and checked ----------===//
//
// Parses the input as an spmd plan, verifies it and, when it verifies,
// runs weft-run's plan-versus-model check against the model its seeds were
// written for (test/lit/Exec/Inputs/spmd-block.mlir): the plan check must
// end in a verdict or an error, never a crash. WEFT_FUZZ_VERBOSE=1 prints
// each input's outcome (to see what a corpus reaches).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "weft/Exec/PlanCheck.h"
#include "weft/Import/OnnxImport.h"
#include <cstdlib>

namespace {
struct Model {
  Model() {
    context.disableMultithreading();
    weft::registerImportDialects(context);
    context.getOrLoadDialect<weft::spmd::SpmdDialect>();
    context.loadAllAvailableDialects();
    graph = mlir::parseSourceFile<mlir::ModuleOp>(
        weft::fuzz::sourcePath("test/lit/Exec/Inputs/spmd-block.mlir"),
        &context);
    if (!graph)
      std::abort();
    // Diagnostics of bad plans are expected: keep them quiet.
    context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    // As weft-run's plan loader does (weft/Support/OpPrintingOff.h).
    context.printOpOnDiagnostic(false);
  }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> graph;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Model model;
  // MLIR's lexer reads up to a terminating NUL, as files read with
  // MemoryBuffer have: give the bytes one.
  std::string text(weft::fuzz::textOf(data, size));
  mlir::OwningOpRef<mlir::ModuleOp> plan =
      mlir::parseSourceString<mlir::ModuleOp>(text, &model.context);
  if (!plan || mlir::failed(mlir::verify(*plan)))
    return 0;
  weft::exec::PlanCheckOptions options;
  auto result = weft::exec::checkPlan(*model.graph, *plan, options);
  if (std::getenv("WEFT_FUZZ_VERBOSE"))
    llvm::errs() << (result ? "checked\n"
                            : llvm::toString(result.takeError()) + "\n");
  weft::fuzz::drop(result);
  return 0;
}
