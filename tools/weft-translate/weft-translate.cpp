//===- weft-translate.cpp - Translations into and out of Weft's dialects --===//

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "weft/Import/ImportFlags.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Support/CommandLine.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace weft;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("weft-translate options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<input file>"),
                             cl::Required, cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("Output file (default: stdout)"),
                              cl::value_desc("file"), cl::init("-"),
                              cl::cat(category));
  cl::opt<bool> importOnnx(
      "import-onnx",
      cl::desc("Import an ONNX model (.onnx or .onnxtext) into the graph "
               "dialect"),
      cl::cat(category));
  cl::opt<bool> forward(
      "forward",
      cl::desc("With --import-onnx: @main returns every graph output, in "
               "order, instead of a scalar loss (a forward-only program for "
               "weft-run --forward)"),
      cl::cat(category));
  ImportFlags flags(category);
  mlir::registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  const char *overview =
      "weft-translate: translations into and out of Weft's dialects\n\n"
      "  weft-translate --import-onnx model.onnx [--global-batch N] -o "
      "model.mlir\n";
  if (!parseCommandLine(argc, argv, "weft-translate", overview))
    return ExitBadInput;

  if (!importOnnx)
    return reportError("weft-translate",
                       badInput("no translation selected (try --import-onnx)"));
  auto options = flags.resolve(/*numDevices=*/1);
  if (!options)
    return reportError("weft-translate", options.takeError());
  if (forward && flags.loss.getNumOccurrences())
    return reportError("weft-translate",
                       badInput("--loss adds a training loss; --forward "
                                "returns the outputs instead: give one"));
  options->allOutputs = forward;
  mlir::MLIRContext context;
  auto module = importOnnxFile(context, input, *options);
  if (!module)
    return reportError("weft-translate", module.takeError());

  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_None);
  if (ec)
    return reportError("weft-translate", badInput("cannot write '{0}': {1}",
                                                  output, ec.message()));
  (*module)->print(out.os(), mlir::OpPrintingFlags());
  out.os() << "\n";
  out.keep();
  return ExitSuccess;
}
