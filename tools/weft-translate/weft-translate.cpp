//===- weft-translate.cpp - Translations into and out of Weft's dialects --===//
//
// One translation per run: ONNX into the graph dialect, or an spmd plan out
// of Weft (docs/Emit.md): the per-rank PyTorch program, launch scripts, the
// estimated step as a picture or a trace.
//
//===----------------------------------------------------------------------===//

#include "../weft-run/ModelLoader.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "weft/Emit/Launch.h"
#include "weft/Emit/Timeline.h"
#include "weft/Emit/TorchProgram.h"
#include "weft/Emit/Trace.h"
#include "weft/Import/ImportFlags.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Support/CommandLine.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace weft;
namespace cl = llvm::cl;

namespace {

enum class Translation {
  None,
  ImportOnnx,
  SpmdToTorch,
  SpmdToLaunch,
  SpmdToTimeline,
  SpmdToTrace
};

/// Writes `print`'s text to `path` ("-": stdout).
llvm::Error
writeOutput(llvm::StringRef path,
            llvm::function_ref<llvm::Error(llvm::raw_ostream &)> print) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return badInput("cannot write '{0}': {1}", path, ec.message());
  if (auto err = print(out.os()))
    return err;
  out.keep();
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("weft-translate options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<input file>"),
                             cl::Required, cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("Output file (default: stdout)"),
                              cl::value_desc("file"), cl::init("-"),
                              cl::cat(category));
  cl::opt<Translation> translation(
      cl::desc("Translation:"), cl::init(Translation::None),
      cl::values(
          clEnumValN(Translation::ImportOnnx, "import-onnx",
                     "Import an ONNX model (.onnx or .onnxtext) into the "
                     "graph dialect"),
          clEnumValN(Translation::SpmdToTorch, "spmd-to-torch",
                     "An spmd plan as the Python program every rank runs "
                     "under torchrun (docs/Emit.md)"),
          clEnumValN(Translation::SpmdToLaunch, "spmd-to-launch",
                     "The launch scripts of an spmd plan: torchrun per node, "
                     "all ranks on this machine, Slurm (docs/Emit.md)"),
          clEnumValN(Translation::SpmdToTimeline, "spmd-to-timeline",
                     "The estimated step of an spmd plan as an SVG picture "
                     "(needs --cluster; docs/Emit.md)"),
          clEnumValN(Translation::SpmdToTrace, "spmd-to-trace",
                     "The estimated step of an spmd plan as a Chrome trace "
                     "(needs --cluster; docs/Emit.md)")),
      cl::cat(category));
  cl::opt<bool> forward(
      "forward",
      cl::desc("With --import-onnx: @main returns every graph output, in "
               "order, instead of a scalar loss (a forward-only program for "
               "weft-run --forward)"),
      cl::cat(category));
  cl::opt<std::string> graphPath(
      "graph",
      cl::desc("With --spmd-to-torch: the graph program the plan was made "
               "from (weftc's DIR/graph.mlir): the names of its inputs "
               "(else arg0, arg1, ...)"),
      cl::value_desc("graph.mlir"), cl::cat(category));
  cl::opt<std::string> hostsPath(
      "hosts",
      cl::desc("With --spmd-to-launch: the host of each mesh node, one per "
               "line in node order (node 0's is the rendezvous)"),
      cl::value_desc("file"), cl::cat(category));
  cl::opt<std::string> launchDir(
      "launch-dir",
      cl::desc("With --spmd-to-launch: write the scripts into this folder "
               "instead of printing them to -o"),
      cl::value_desc("dir"), cl::cat(category));
  cl::opt<std::string> clusterPath(
      "cluster",
      cl::desc("With --spmd-to-timeline or --spmd-to-trace: the cluster "
               "spec the plan runs on"),
      cl::value_desc("spec.yaml"), cl::cat(category));
  cl::opt<std::string> dtypeName(
      "dtype",
      cl::desc("With --spmd-to-timeline or --spmd-to-trace: the compute "
               "dtype the plan was made for: fp32 (default), bf16 or fp16"),
      cl::init("fp32"), cl::cat(category));
  ImportFlags flags(category);
  mlir::registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  const char *overview =
      "weft-translate: translations into and out of Weft's dialects\n\n"
      "  weft-translate --import-onnx model.onnx [--global-batch N] -o "
      "model.mlir\n"
      "  weft-translate --spmd-to-torch plan.mlir [--graph graph.mlir] -o "
      "program.py\n"
      "  weft-translate --spmd-to-launch plan.mlir [--hosts FILE] "
      "[--launch-dir DIR]\n"
      "  weft-translate --spmd-to-timeline plan.mlir --cluster spec.yaml -o "
      "timeline.svg\n"
      "  weft-translate --spmd-to-trace plan.mlir --cluster spec.yaml -o "
      "trace.json\n";
  if (!parseCommandLine(argc, argv, "weft-translate", overview))
    return ExitBadInput;
  const char *tool = "weft-translate";
  mlir::MLIRContext context;

  switch (translation) {
  case Translation::None:
    return reportError(tool, badInput("no translation selected (--import-onnx, "
                                      "--spmd-to-torch, --spmd-to-launch, "
                                      "--spmd-to-timeline or "
                                      "--spmd-to-trace; see --help)"));
  case Translation::ImportOnnx: {
    auto options = flags.resolve(/*numDevices=*/1);
    if (!options)
      return reportError(tool, options.takeError());
    if (forward && flags.loss.getNumOccurrences())
      return reportError(tool,
                         badInput("--loss adds a training loss; --forward "
                                  "returns the outputs instead: give one"));
    options->allOutputs = forward;
    auto module = importOnnxFile(context, input, *options);
    if (!module)
      return reportError(tool, module.takeError());
    return reportError(tool, writeOutput(output, [&](llvm::raw_ostream &os) {
                         (*module)->print(os, mlir::OpPrintingFlags());
                         os << "\n";
                         return llvm::Error::success();
                       }));
  }
  case Translation::SpmdToTorch: {
    auto plan = loadPlan(context, input);
    if (!plan)
      return reportError(tool, plan.takeError());
    mlir::OwningOpRef<mlir::ModuleOp> graph;
    if (!graphPath.empty()) {
      auto g = parseModuleFile(context, graphPath, "graph program");
      if (!g)
        return reportError(tool, g.takeError());
      graph = std::move(*g);
    }
    TorchEmitOptions options;
    options.graph = graph ? *graph : mlir::ModuleOp();
    options.title = llvm::sys::path::filename(input).str();
    return reportError(tool, writeOutput(output, [&](llvm::raw_ostream &os) {
                         return emitTorchProgram(**plan, options, os);
                       }));
  }
  case Translation::SpmdToLaunch: {
    auto plan = loadPlan(context, input);
    if (!plan)
      return reportError(tool, plan.takeError());
    LaunchOptions options;
    if (!hostsPath.empty()) {
      auto hosts = readHostsFile(hostsPath);
      if (!hosts)
        return reportError(tool, hosts.takeError());
      options.hosts = std::move(*hosts);
    }
    if (!launchDir.empty())
      return reportError(tool, writeLaunchDir(**plan, options, launchDir));
    return reportError(tool, writeOutput(output, [&](llvm::raw_ostream &os) {
                         return emitLaunch(**plan, options, os);
                       }));
  }
  case Translation::SpmdToTimeline:
  case Translation::SpmdToTrace: {
    if (clusterPath.empty())
      return reportError(tool, badInput("the estimated step needs the "
                                        "cluster the plan runs on: give "
                                        "--cluster spec.yaml"));
    auto dtype = parseDType(dtypeName);
    if (!dtype)
      return reportError(tool, badInput("unknown --dtype '{0}' (expected "
                                        "fp32, bf16 or fp16)",
                                        dtypeName.getValue()));
    auto spec = loadClusterSpec(clusterPath);
    if (!spec)
      return reportError(tool, spec.takeError());
    auto plan = loadPlan(context, input);
    if (!plan)
      return reportError(tool, plan.takeError());
    // As weftc estimates the plans it writes.
    EvalOptions options;
    options.dtype = *dtype;
    options.overlapGradientSync = true;
    auto picture =
        pictureOf(**plan, *spec, options, llvm::sys::path::filename(input));
    if (!picture)
      return reportError(tool, picture.takeError());
    return reportError(tool, writeOutput(output, [&](llvm::raw_ostream &os) {
                         if (translation == Translation::SpmdToTimeline)
                           writeTimelineSVG(*picture, os);
                         else
                           writeTraceJSON(*picture, os);
                         return llvm::Error::success();
                       }));
  }
  }
  return ExitSuccess;
}
