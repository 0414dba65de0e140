//===- ForwardRun.cpp - weft-run --forward: every output, no loss ---------===//
//
// The forward pass of a model that has no training loss (an inference
// graph, one ONNX operator's test): the importer keeps every graph output
// (`ImportOptions::allOutputs`), the interpreter runs the program once, and
// output i is written as DIR/<i>.npy. docs/Exec.md describes the mode.
//
//===----------------------------------------------------------------------===//

#include "ForwardRun.h"
#include "ModelLoader.h"
#include "mlir/IR/MLIRContext.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/Npy.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <chrono>

using namespace weft;
using namespace weft::exec;

/// The .npy dtype output `t` is written as.
static const char *npyTypeName(const Tensor &t) {
  if (t.isFloat())
    return "float32";
  return t.getElementType() == ElementType::I1 ? "bool" : "int64";
}

int weft::runForward(const ForwardRunOptions &options) {
  const char *tool = "weft-run";
  ImportOptions import = options.import;
  import.allOutputs = true;
  mlir::MLIRContext context;
  auto module = loadGraphProgram(context, options.model, import);
  if (!module)
    return reportError(tool, module.takeError());
  auto main = findForwardMain(**module);
  if (!main)
    return reportError(tool, inFile(options.model, main.takeError()));
  if (auto err = checkFitsMemory(*main, options.model))
    return reportError(tool, std::move(err));
  BindingSummary summary;
  auto bindings = makeBindings(*main, options.init, &summary);
  if (!bindings)
    return reportError(tool, bindings.takeError());
  if (!options.outputDir.empty())
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.outputDir))
      return reportError(tool, badInput("cannot create '{0}': {1}",
                                        options.outputDir, ec.message()));

  GraphInterpreter interpreter(*main, options.init.seed);
  auto start = std::chrono::steady_clock::now();
  if (auto err = interpreter.forward(*bindings))
    return reportError(tool, std::move(err));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("model:       {0}\n",
                      llvm::sys::path::filename(options.model));
  os << llvm::formatv("parameters:  {0} tensors ({1} from weights, {2} "
                      "seeded random)\n",
                      summary.parametersFromWeights + summary.parametersRandom,
                      summary.parametersFromWeights, summary.parametersRandom);
  os << llvm::formatv("inputs:      {0} from .npy files, {1} seeded random "
                      "(seed {2})\n",
                      summary.inputsFromFiles, summary.inputsRandom,
                      options.init.seed);
  for (auto [i, value] : llvm::enumerate(interpreter.getOutputs())) {
    if (!value)
      return reportError(tool, makeError(ExitInternal,
                                         "output {0} of @main has no value "
                                         "after the forward pass",
                                         i));
    std::string file;
    if (!options.outputDir.empty()) {
      llvm::SmallString<128> path(options.outputDir);
      llvm::sys::path::append(path, std::to_string(i) + ".npy");
      if (auto err = writeNpy(path, *value))
        return reportError(tool, std::move(err));
      file = (" -> " + path).str();
    }
    std::string label = llvm::formatv("output {0}:", i).str();
    os << llvm::formatv(
        "{0}{1}'{2}' {3} {4}{5}\n", label,
        std::string(std::max<size_t>(1, 13 - label.size()), ' '),
        outputName(*main, i), npyTypeName(*value),
        shapeString(value->getShape()), file);
  }
  os << llvm::formatv("time:        forward {0} (wall, one thread)\n",
                      formatSeconds(seconds));
  return ExitSuccess;
}
