//===- weft-run.cpp - Run a training step's forward and backward on CPU ---===//
//
// weft-run MODEL [--global-batch N | --batch-per-device N] [--seed S]
//                [--with-weights] [--input NAME=FILE.npy]...
//                [--check-gradients]
//                [--rtol R --atol A] [--plan DIR/plan.mlir]
// weft-run MODEL --forward [--input NAME=FILE.npy]... [--write-outputs DIR]
//
// Prints the single-device loss of one training step (forward and backward
// of the graph program) and, with --check-gradients, compares a sample of
// parameter gradients with central differences of the loss (exit 3 when
// one differs). With --plan, runs the spmd plan on its mesh's virtual
// devices too and compares the loss and every parameter gradient (exit 3
// naming the first op, tensor and device that differ; 1 when the plan is
// not of this model). With --forward, runs the forward pass of a model
// without a training loss and writes every graph output (ForwardRun.h).
//
//===----------------------------------------------------------------------===//

#include "ForwardRun.h"
#include "ModelLoader.h"
#include "PlanRun.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "weft/Exec/GradientCheck.h"
#include "weft/Exec/Inputs.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Import/ImportFlags.h"
#include "weft/Support/CommandLine.h"
#include "weft/Support/Error.h"
#include "weft/Support/Progress.h"
#include "weft/Support/Units.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include <chrono>
#include <cmath>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace weft;
using namespace weft::exec;
namespace cl = llvm::cl;

namespace {

struct Options {
  cl::OptionCategory category{"weft-run options"};
  cl::opt<std::string> model{cl::Positional,
                             cl::desc("<model.onnx | model.onnxtext | "
                                      "graph.mlir>"),
                             cl::cat(category)};
  cl::opt<std::string> plan{
      "plan",
      cl::desc("SPMD plan to verify against the model: runs it on its "
               "mesh's devices and compares loss and gradients"),
      cl::value_desc("dir/plan.mlir"), cl::cat(category)};
  cl::opt<uint64_t> seed{"seed",
                         cl::desc("Seed of random parameters, inputs and "
                                  "dropout masks (default 0)"),
                         cl::init(0), cl::cat(category)};
  cl::list<std::string> inputs{
      "input",
      cl::desc("Read a data input from a .npy file (float32 or "
               "int64, C order; repeatable)"),
      cl::value_desc("name=file.npy"), cl::cat(category)};
  cl::opt<bool> checkGradients{
      "check-gradients",
      cl::desc("Compare sampled parameter gradients with central "
               "differences of the loss (exit 3 if one differs)"),
      cl::cat(category)};
  cl::opt<double> rtol{"rtol",
                       cl::desc("Relative tolerance (gradient check default "
                                "2e-2)"),
                       cl::cat(category)};
  cl::opt<double> atol{"atol",
                       cl::desc("Absolute tolerance (gradient check default "
                                "2e-4)"),
                       cl::cat(category)};
  cl::opt<unsigned> samples{
      "grad-samples",
      cl::desc("Elements checked per parameter (default 3: the largest "
               "gradient and two at random)"),
      cl::init(3), cl::cat(category)};
  cl::opt<bool> printGradients{
      "print-gradients",
      cl::desc("Print the L2 norm of every parameter's gradient (with "
               "--plan: the max difference of each parameter's gradient)"),
      cl::cat(category)};
  cl::opt<bool> forward{
      "forward",
      cl::desc("Run the forward pass only, for a model without a training "
               "loss: every graph output is kept and printed"),
      cl::cat(category)};
  cl::opt<std::string> writeOutputs{
      "write-outputs",
      cl::desc("With --forward: write graph output i to DIR/<i>.npy "
               "(float32, int64 or bool)"),
      cl::value_desc("dir"), cl::cat(category)};
  cl::opt<std::string> dualOverride{
      "test-dual-override", cl::Hidden,
      cl::desc("Testing: replace the backward of one collective, "
               "OP=COLLECTIVE (e.g. spmd.shard=all_gather)"),
      cl::cat(category)};
  cl::opt<int64_t> dropMicroBatch{
      "test-drop-micro-batch",
      cl::Hidden,
      cl::init(-1),
      cl::desc("Testing: with a pipelined --plan, leave micro-batch K's "
               "parameter gradients out of the accumulation"),
      cl::value_desc("K"),
      cl::cat(category)};
  cl::opt<bool> noTies{
      "test-no-ties", cl::Hidden,
      cl::desc("Testing: with --plan, compare without resolving ties at "
               "kinks of piecewise ops (docs/Exec.md)"),
      cl::cat(category)};
  ImportFlags import{category};
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double l2Norm(const Tensor &t) {
  double s = 0;
  for (float v : t.floatValues())
    s += double(v) * v;
  return std::sqrt(s);
}

llvm::Error parseInputFiles(const Options &opts, InitOptions &init) {
  for (const std::string &spec : opts.inputs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (name.empty() || file.empty())
      return badInput("--input '{0}': expected name=file.npy", spec);
    init.npyFiles[name] = file.str();
  }
  return llvm::Error::success();
}

/// weft-run MODEL --plan PLAN: the reference against the spmd plan.
int runWithPlan(Options &opts) {
  const char *tool = "weft-run";
  if (opts.checkGradients)
    return reportError(tool, badInput("--check-gradients checks the "
                                      "single-device run: run it without "
                                      "--plan"));
  mlir::MLIRContext context;
  auto plan = loadPlan(context, opts.plan);
  if (!plan)
    return reportError(tool, plan.takeError());
  auto devices = planDevices(**plan);
  if (!devices)
    return reportError(tool, inFile(opts.plan, devices.takeError()));
  auto io = opts.import.resolve(*devices);
  if (!io)
    return reportError(tool, io.takeError());
  PlanCheckOptions check;
  check.seed = opts.seed;
  InitOptions init;
  if (auto err = parseInputFiles(opts, init))
    return reportError(tool, std::move(err));
  for (auto &f : init.npyFiles)
    check.npyFiles[f.getKey()] = f.getValue();
  if (opts.rtol.getNumOccurrences())
    check.rtol = opts.rtol;
  if (opts.atol.getNumOccurrences())
    check.atol = opts.atol;
  check.resolveTies = !opts.noTies;
  check.testDropMicroBatch = opts.dropMicroBatch;
  if (!opts.dualOverride.empty()) {
    auto duals = overriddenDuals(opts.dualOverride);
    if (!duals)
      return reportError(tool, duals.takeError());
    check.duals = *duals;
  }
  // Gradient accumulation: the plan is one micro-batch of the step, checked
  // against the model at that batch.
  int64_t micro = spmd::SpmdDialect::getMicroBatches(**plan);
  if (micro > 1) {
    if (*io->batch % micro)
      return reportError(tool, badInput("the plan runs {0} micro-batches, "
                                        "which do not split the global "
                                        "batch of {1} samples",
                                        micro, *io->batch));
    io->batch = *io->batch / micro;
  }
  auto module = loadGraphProgram(context, opts.model, *io);
  if (!module)
    return reportError(tool, module.takeError());
  auto modelMain = findMain(**module);
  if (!modelMain)
    return reportError(tool, inFile(opts.model, modelMain.takeError()));
  if (auto err = checkFitsMemory(*modelMain, opts.model))
    return reportError(tool, std::move(err));
  if (micro > 1) {
    (**module)->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                        mlir::Builder(&context).getI64IntegerAttr(micro));
    if (spmd::isPipelined(**plan))
      llvm::outs() << llvm::formatv(
          "micro-batches: {0} of {1} samples through the pipeline, "
          "gradients accumulated\n",
          micro, *io->batch);
    else
      llvm::outs() << llvm::formatv(
          "micro-batches: {0} of {1} samples (gradient accumulation); the "
          "check runs one micro-batch\n",
          micro, *io->batch);
  }
  return runPlanCheck(opts.model, opts.plan, **module, **plan, check,
                      opts.printGradients);
}

/// weft-run MODEL --forward: every output of one forward pass.
int runForwardOnly(Options &opts) {
  const char *tool = "weft-run";
  for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
           &opts.plan, &opts.checkGradients, &opts.printGradients, &opts.rtol,
           &opts.atol, &opts.samples, &opts.import.loss})
    if (flag->getNumOccurrences())
      return reportError(tool, badInput("--{0} applies to a training step; "
                                        "--forward runs the forward pass "
                                        "only",
                                        flag->ArgStr));
  ForwardRunOptions forward;
  forward.model = opts.model;
  auto io = opts.import.resolve(1);
  if (!io)
    return reportError(tool, io.takeError());
  forward.import = *io;
  forward.init.seed = opts.seed;
  if (auto err = parseInputFiles(opts, forward.init))
    return reportError(tool, std::move(err));
  forward.outputDir = opts.writeOutputs;
  if (opts.writeOutputs.getNumOccurrences() && forward.outputDir.empty())
    return reportError(tool, badInput("--write-outputs needs a directory"));
  return runForward(forward);
}

int run(Options &opts) {
  const char *tool = "weft-run";
  if (opts.model.empty())
    return reportError(tool, badInput("no model given (see --help)"));
  for (cl::opt<double> *tol : {&opts.rtol, &opts.atol}) {
    if (!tol->getNumOccurrences())
      continue;
    if (!(*tol >= 0) || !std::isfinite(*tol))
      return reportError(tool, badInput("--{0} must be a finite number >= 0, "
                                        "got {1}",
                                        tol->ArgStr, double(*tol)));
    if (!opts.checkGradients && opts.plan.empty() && !opts.forward)
      return reportError(tool, badInput("--{0} applies to --check-gradients "
                                        "or --plan, and neither is given",
                                        tol->ArgStr));
  }
  if (opts.samples == 0)
    return reportError(tool, badInput("--grad-samples must be at least 1"));
  if (opts.forward)
    return runForwardOnly(opts);
  if (opts.writeOutputs.getNumOccurrences())
    return reportError(tool, badInput("--write-outputs applies to --forward, "
                                      "which is not given"));
  if (!opts.plan.empty())
    return runWithPlan(opts);
  auto io = opts.import.resolve(1);
  if (!io)
    return reportError(tool, io.takeError());
  InitOptions init;
  init.seed = opts.seed;
  if (auto err = parseInputFiles(opts, init))
    return reportError(tool, std::move(err));

  mlir::MLIRContext context;
  auto module = loadGraphProgram(context, opts.model, *io);
  if (!module)
    return reportError(tool, module.takeError());
  auto main = findMain(**module);
  if (!main)
    return reportError(tool, inFile(opts.model, main.takeError()));
  if (auto err = checkFitsMemory(*main, opts.model))
    return reportError(tool, std::move(err));
  BindingSummary summary;
  auto bindings = makeBindings(*main, init, &summary);
  if (!bindings)
    return reportError(tool, bindings.takeError());

  Progress progress("weft-run");
  GraphInterpreter interpreter(*main, opts.seed);
  interpreter.setProgress([&](llvm::StringRef s) { progress.update(s); });
  auto start = std::chrono::steady_clock::now();
  if (auto err = interpreter.forward(*bindings))
    return reportError(tool, std::move(err));
  double forwardSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  if (auto err = interpreter.backward())
    return reportError(tool, std::move(err));
  double backwardSeconds = secondsSince(start);
  progress.done();

  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("model:       {0}\n",
                      llvm::sys::path::filename(opts.model));
  os << llvm::formatv("parameters:  {0} tensors, {1} elements ({2} from "
                      "weights, {3} seeded random)\n",
                      summary.parametersFromWeights + summary.parametersRandom,
                      summary.parameterElements, summary.parametersFromWeights,
                      summary.parametersRandom);
  os << llvm::formatv("inputs:      {0} from .npy files, {1} seeded random "
                      "(seed {2})\n",
                      summary.inputsFromFiles, summary.inputsRandom,
                      opts.seed.getValue());
  os << "loss:        " << llvm::format("%.7g", interpreter.getLoss()) << "\n";
  os << llvm::formatv("time:        forward {0}, backward {1} (wall, one "
                      "thread)\n",
                      formatSeconds(forwardSeconds),
                      formatSeconds(backwardSeconds));
  if (opts.printGradients)
    for (const std::string &name : interpreter.getParameterNames())
      os << llvm::formatv(
          "grad norm:   {0} {1:e6}\n", name,
          l2Norm(interpreter.getParameterGradients().find(name)->second));
  if (!opts.checkGradients)
    return ExitSuccess;

  GradientCheckOptions check;
  check.seed = opts.seed;
  check.elementsPerParameter = opts.samples;
  if (opts.rtol.getNumOccurrences())
    check.rtol = opts.rtol;
  if (opts.atol.getNumOccurrences())
    check.atol = opts.atol;
  auto result = checkGradients(interpreter, *bindings, check);
  if (!result)
    return reportError(tool, result.takeError());
  if (const auto &bad = result->mismatch)
    return reportError(
        tool, makeError(ExitVerifyFailed,
                        "gradient check failed: parameter '{0}' element {1}: "
                        "backward gives {2:e6}, central difference {3:e6} "
                        "(|difference| {4:e3} > atol {5:e1} + rtol {6:e1} x "
                        "magnitude)",
                        bad->parameter, bad->coordinates, bad->analytic,
                        bad->numeric, std::fabs(bad->analytic - bad->numeric),
                        check.atol, check.rtol));
  os << llvm::formatv("gradients:   {0} elements of {1} parameters agree with "
                      "central differences (max |difference| {2:e2}; rtol "
                      "{3:e1}, atol {4:e1})\n",
                      result->checked, result->parameters, result->maxAbsError,
                      check.rtol, check.atol);
  if (result->kinks)
    os << llvm::formatv("             {0} sampled elements skipped: a kink "
                        "(ReLU, max, clip) within the step\n",
                        result->kinks);
  return ExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Tensors of a few MB are allocated and freed op after op; keep freed
  // memory in the heap instead of returning it to the kernel, which would
  // zero fresh pages on every allocation (half the time of an SPMD run).
  // (glibc caps the mmap threshold at 32 MB on 64-bit.)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  const char *overview =
      "weft-run: run one training step of a model on the CPU (reference "
      "interpreter)\n\n"
      "  weft-run model.onnx [--global-batch N] [--with-weights] [--seed S]\n"
      "      prints the single-device loss of the forward pass and times the\n"
      "      forward and backward passes.\n"
      "  weft-run model.onnx --check-gradients [--rtol R --atol A]\n"
      "      also compares sampled parameter gradients with central\n"
      "      differences of the loss.\n"
      "  weft-run model.onnx --forward [--input x=x.npy]... "
      "[--write-outputs DIR]\n"
      "      runs the forward pass of a model without a training loss and\n"
      "      writes graph output i to DIR/<i>.npy.\n\n"
      "Exit codes: 0 success, 1 bad input, 3 verification failed, 4 internal\n"
      "error.\n";
  if (!parseCommandLine(argc, argv, "weft-run", overview))
    return ExitBadInput;
  return run(opts);
}
