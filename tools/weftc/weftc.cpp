//===- weftc.cpp - The Weft compiler driver -------------------------------===//
//
// weftc MODEL [--cluster SPEC] [--baselines] [-o DIR]: imports the model,
// prints what it holds and costs (and, with a cluster, the lower bound of
// any plan and, with --baselines, the baselines' estimates). Plans are
// synthesised only when -o is given.
//
//===----------------------------------------------------------------------===//

#include "BaselineReport.h"
#include "CellsOutput.h"
#include "PipelineDriver.h"
#include "PlanOutput.h"
#include "RandomPlanOutput.h"
#include "Spmd/IR/SpmdDialect.h"
#include "SynthDriver.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Analysis/ModelSummary.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Cost/LowerBound.h"
#include "weft/Cost/ProfileDB.h"
#include "weft/Import/ImportFlags.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Support/CommandLine.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/PlanChoice.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include <optional>

using namespace weft;
namespace cl = llvm::cl;

namespace {

struct Options {
  cl::OptionCategory category{"weftc options"};
  cl::opt<std::string> model{cl::Positional,
                             cl::desc("<model.onnx | model.onnxtext>"),
                             cl::cat(category)};
  cl::opt<std::string> cluster{
      "cluster", cl::desc("Cluster spec (YAML); alone, prints the cluster"),
      cl::value_desc("spec.yaml"), cl::cat(category)};
  cl::opt<std::string> outDir{"o",
                              cl::desc("Output directory for the plan files"),
                              cl::value_desc("dir"), cl::cat(category)};
  cl::opt<std::string> dtype{"dtype",
                             cl::desc("Compute dtype: fp32 (default), bf16 "
                                      "or fp16 (mixed precision)"),
                             cl::init("fp32"), cl::cat(category)};
  cl::opt<std::string> profile{
      "profile",
      cl::desc("Profile DB written by weft-profile: measured kernel times "
               "replace the roofline where they exist"),
      cl::value_desc("db.json"), cl::cat(category)};
  cl::opt<bool> baselines{
      "baselines",
      cl::desc("Build and estimate the baselines DP-EV, DP-CP and TP-DP "
               "(needs --cluster); with -o, writes each plan to "
               "DIR/baselines/<name>/plan.mlir"),
      cl::cat(category)};
  cl::opt<bool> noSynthesis{
      "no-synthesis",
      cl::desc("With -o, write the graph program, the summary and (with "
               "--baselines) the baseline plans, but synthesise no plan"),
      cl::cat(category)};
  cl::opt<uint64_t> randomPlan{
      "random-plan",
      cl::desc("With -o and --cluster: write the random valid plan of this "
               "seed (weft/Spmd/RandomPlan.h) instead of synthesising one, "
               "estimated and runnable like a synthesised plan"),
      cl::value_desc("SEED"), cl::cat(category)};
  cl::opt<bool> json{"json", cl::desc("Print the summary as JSON on stdout"),
                     cl::cat(category)};
  ImportFlags import{category};
  SynthFlags synth{category};
  CellFlags cells{category};
};

/// What weftc knows about a model on a cluster.
struct ClusterView {
  const ClusterSpec &spec;
  DType dtype;
  /// One single-device compute estimate per device type of the cluster.
  std::vector<std::pair<std::string, ComputeEstimate>> perType;
};

ClusterView viewOnCluster(mlir::ModuleOp module, const ClusterSpec &spec,
                          DType dtype, const ProfileDB *db) {
  ClusterView view{spec, dtype, {}};
  for (const DeviceType &type : spec.deviceTypes)
    view.perType.emplace_back(type.name,
                              estimateStepCompute(module, type, dtype, db));
  return view;
}

void printText(const Options &opts, const ImportReport &report,
               const ImportOptions &io, const ModelSummary &s,
               const ClusterView *view) {
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("model:               {0} (opset {1}{2}{3})\n",
                      llvm::sys::path::filename(opts.model),
                      report.opsetVersion,
                      report.producer.empty() ? "" : ", by " + report.producer,
                      report.weightless     ? ", weightless"
                      : report.externalData ? ", external data not read"
                                            : "");
  os << llvm::formatv("global batch:        {0} samples\n", *io.batch);
  os << llvm::formatv("loss:                {0}\n", report.lossName);
  printModelSummary(s, os);
  for (const auto &group : report.sharedParameters)
    os << "shared parameter:    " << llvm::join(group, " = ") << "\n";
  if (report.fusedGelus)
    os << llvm::formatv("fused:               {0} GELU chains (erf form) into "
                        "graph.gelu (--no-fuse keeps them)\n",
                        report.fusedGelus);
  if (!view)
    return;
  const ClusterSpec &spec = view->spec;
  os << llvm::formatv("cluster:             {0} ({1} devices)\n", spec.name,
                      spec.numDevices());
  double peak = spec.totalPeakFlops(view->dtype);
  os << llvm::formatv(
      "lower bound:         {0} per step (training FLOPs / "
      "{1} {2} peak)\n",
      formatSeconds(lowerBoundSeconds(s.trainingFlops(), spec, view->dtype)),
      formatSI(peak, "FLOP/s"), opts.dtype.getValue());
  for (const auto &[type, estimate] : view->perType)
    os << llvm::formatv("step on one {0,-8} {1} compute (estimate; {2} of {3} "
                        "op times measured)\n",
                        type + ":", formatSeconds(estimate.seconds),
                        estimate.measuredOps, estimate.timedOps);
}

llvm::json::Value toJSONReport(const Options &opts, const ImportReport &report,
                               const ImportOptions &io, const ModelSummary &s,
                               const ClusterView *view) {
  llvm::json::Object root{{"model", opts.model.getValue()},
                          {"opset", report.opsetVersion},
                          {"global_batch", *io.batch},
                          {"loss", report.lossName},
                          {"summary", toJSON(s)}};
  llvm::json::Array shared;
  for (const auto &group : report.sharedParameters)
    shared.push_back(llvm::json::Array(group));
  root["shared_parameters"] = std::move(shared);
  root["fused_gelus"] = int64_t(report.fusedGelus);
  if (view) {
    const ClusterSpec &spec = view->spec;
    root["cluster"] = spec.name;
    root["devices"] = spec.numDevices();
    root["dtype"] = opts.dtype.getValue();
    root["peak_flops_per_s"] = spec.totalPeakFlops(view->dtype);
    root["lower_bound_s"] =
        lowerBoundSeconds(s.trainingFlops(), spec, view->dtype);
    llvm::json::Object perType;
    for (const auto &[type, estimate] : view->perType)
      perType[type] =
          llvm::json::Object{{"compute_s", estimate.seconds},
                             {"estimate", true},
                             {"timed_ops", estimate.timedOps},
                             {"measured_ops", estimate.measuredOps}};
    root["single_device_step"] = std::move(perType);
  }
  return root;
}

int run(Options &opts) {
  auto dtype = parseDType(opts.dtype);
  if (!dtype)
    return reportError("weftc", badInput("unknown --dtype '{0}' (expected "
                                         "fp32, bf16 or fp16)",
                                         opts.dtype.getValue()));
  if (opts.baselines && opts.cluster.empty())
    return reportError("weftc", badInput("--baselines needs --cluster"));
  // Flag values are checked before any work (the model's summary is printed
  // before synthesis starts).
  auto stages = parseStagesFlag(opts.synth.stages);
  if (!stages)
    return reportError("weftc", stages.takeError());
  std::optional<ClusterSpec> spec;
  if (!opts.cluster.empty()) {
    auto loaded = loadClusterSpec(opts.cluster);
    if (!loaded)
      return reportError("weftc", loaded.takeError());
    spec = std::move(*loaded);
  }
  if (opts.model.empty()) {
    if (!spec)
      return reportError("weftc", badInput("no model given (see --help)"));
    printClusterSummary(*spec, llvm::outs());
    return ExitSuccess;
  }
  // Synthesis prices collectives and sizes shards per device; 16384 devices
  // take 80 s, 10^5 do not end in 10 minutes (docs/ExitCodes.md).
  constexpr unsigned kMaxSynthesisDevices = 16384;
  if (spec && !opts.outDir.empty() && !opts.noSynthesis &&
      spec->numDevices() > kMaxSynthesisDevices)
    return reportError(
        "weftc", badInput("{0}: the cluster has {1} devices; plan synthesis "
                          "(-o) supports at most {2} (--no-synthesis writes "
                          "the graph program alone)",
                          opts.cluster.getValue(), spec->numDevices(),
                          kMaxSynthesisDevices));

  std::optional<ProfileDB> db;
  if (!opts.profile.empty()) {
    auto loaded = loadProfileDB(opts.profile);
    if (!loaded)
      return reportError("weftc", loaded.takeError());
    db = std::move(*loaded);
  }

  if (opts.cells.cells) {
    if (!spec)
      return reportError("weftc", badInput("--cells needs --cluster"));
    EvalOptions eval;
    eval.dtype = *dtype;
    eval.profile = db ? &*db : nullptr;
    if (auto err = printCells(opts.cells, opts.model, opts.import.globalBatch,
                              *spec, eval, opts.json, llvm::outs()))
      return reportError("weftc", std::move(err));
    return ExitSuccess;
  }

  auto io = opts.import.resolve(spec ? spec->numDevices() : 1);
  if (!io)
    return reportError("weftc", io.takeError());
  mlir::MLIRContext context;
  ImportReport report;
  auto module = importOnnxFile(context, opts.model, *io, &report);
  if (!module)
    return reportError("weftc", module.takeError());
  if (auto err = applyBucketFlag(opts.synth, **module))
    return reportError("weftc", std::move(err));
  ModelSummary summary = summarizeModel(**module);
  std::optional<ClusterView> view;
  if (spec)
    view.emplace(viewOnCluster(**module, *spec, *dtype, db ? &*db : nullptr));
  const ClusterView *viewPtr = view ? &*view : nullptr;
  llvm::json::Value json = toJSONReport(opts, report, *io, summary, viewPtr);
  // Synthesis (-o with a cluster) compares its plan with the baselines,
  // built then (below) unless --baselines wants them now.
  std::optional<std::vector<BaselineRow>> baselines;
  bool random = opts.randomPlan.getNumOccurrences() > 0;
  if (random && (!spec || opts.outDir.empty()))
    return reportError("weftc",
                       badInput("--random-plan needs --cluster and -o"));
  bool synthesise =
      spec && !opts.outDir.empty() && !opts.noSynthesis && !random;
  auto baselinesOf = [&](mlir::ModuleOp graph,
                         std::optional<std::vector<BaselineRow>> &rows)
      -> llvm::Expected<const std::vector<BaselineRow> *> {
    if (!rows) {
      auto built = estimateBaselines(graph, *spec, *dtype, db ? &*db : nullptr,
                                     summarizeModel(graph).trainingFlops());
      if (!built)
        return built.takeError();
      rows = std::move(*built);
    }
    return &*rows;
  };
  if (opts.baselines) {
    auto rows = baselinesOf(**module, baselines);
    if (!rows)
      return reportError("weftc", rows.takeError());
    json.getAsObject()->try_emplace("baselines", toJSON(**rows));
  }
  if (opts.json) {
    llvm::outs() << llvm::formatv("{0:2}", json) << "\n";
  } else {
    printText(opts, report, *io, summary, viewPtr);
    if (opts.baselines)
      printBaselines(*baselines, opts.dtype, llvm::outs());
  }

  if (opts.outDir.empty())
    return ExitSuccess;
  if (std::error_code ec = llvm::sys::fs::create_directories(opts.outDir))
    return reportError("weftc", badInput("cannot create '{0}': {1}",
                                         opts.outDir.getValue(), ec.message()));
  llvm::SmallString<128> graphPath(opts.outDir), summaryPath(opts.outDir);
  llvm::sys::path::append(graphPath, "graph.mlir");
  llvm::sys::path::append(summaryPath, "summary.json");
  if (auto err = writeFile(std::string(graphPath), [&](llvm::raw_ostream &os) {
        (*module)->print(os);
        os << "\n";
      }))
    return reportError("weftc", std::move(err));
  if (auto err =
          writeFile(std::string(summaryPath), [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", json) << "\n";
          }))
    return reportError("weftc", std::move(err));
  PlanContext planContext;
  if (spec) {
    planContext.model = opts.model;
    planContext.cluster = spec->name;
    planContext.dtype = opts.dtype;
    planContext.globalBatch = *io->batch;
    planContext.lowerBoundSeconds =
        lowerBoundSeconds(summary.trainingFlops(), *spec, *dtype);
    if (opts.baselines) {
      for (const BaselineRow &row : *baselines)
        planContext.baselines.emplace_back(row.name, row.estimate.stepSeconds);
      if (auto err = writeBaselinePlans(*baselines, **module, opts.outDir,
                                        *spec, planContext))
        return reportError("weftc", std::move(err));
    }
  }
  if (random) {
    EvalOptions eval;
    eval.dtype = *dtype;
    eval.profile = db ? &*db : nullptr;
    if (auto err = writeRandomPlan(opts.randomPlan, **module, *spec, eval,
                                   planContext, opts.outDir,
                                   opts.json ? llvm::errs() : llvm::outs()))
      return reportError("weftc", std::move(err));
    return ExitSuccess;
  }
  if (synthesise) {
    auto clusterText = llvm::MemoryBuffer::getFile(opts.cluster);
    if (!clusterText)
      return reportError("weftc", badInput("cannot read '{0}': {1}",
                                           opts.cluster.getValue(),
                                           clusterText.getError().message()));
    EvalOptions eval;
    eval.dtype = *dtype;
    eval.profile = db ? &*db : nullptr;
    // With --json stdout holds only the JSON document.
    llvm::raw_ostream &os = opts.json ? llvm::errs() : llvm::outs();
    if (*stages != 1) {
      // Pipeline stages: the program of one micro-batch for each count.
      auto graphAt =
          [&](int64_t m) -> llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> {
        ImportOptions mio = *io;
        mio.batch = *io->batch / m;
        if (m > 1 && !report.batchSymbolic)
          return badInput("{0} micro-batches need a symbolic batch dim", m);
        auto imported = importOnnxFile(context, opts.model, mio);
        if (!imported)
          return imported.takeError();
        if (auto err = applyBucketFlag(opts.synth, **imported))
          return std::move(err);
        return std::move(*imported);
      };
      SynthInputs inputs{**module,
                         *spec,
                         (*clusterText)->getBuffer().str(),
                         eval,
                         planContext,
                         [&] { return baselinesOf(**module, baselines); }};
      if (auto err = pipelineAndWrite(opts.synth, inputs, *stages, graphAt,
                                      *io->batch, opts.outDir, os))
        return reportError("weftc", std::move(err));
      return ExitSuccess;
    }
    auto counts = microBatchCounts(opts.synth.microBatches, *io->batch,
                                   spec->numDevices(), report.batchSymbolic);
    if (!counts)
      return reportError("weftc", counts.takeError());
    auto attempt = [&](int64_t m) -> llvm::Error {
      // Gradient accumulation: the graph of one micro-batch, and the
      // baselines on it.
      mlir::OwningOpRef<mlir::ModuleOp> micro;
      std::optional<std::vector<BaselineRow>> microBaselines;
      if (m > 1) {
        ImportOptions mio = *io;
        mio.batch = *io->batch / m;
        auto imported = importOnnxFile(context, opts.model, mio);
        if (!imported)
          return makeError(ExitInfeasible,
                           "no plan fits memory at {0} samples per step, and "
                           "the model does not import at {1} per "
                           "micro-batch: {2}",
                           *io->batch, *mio.batch,
                           llvm::toString(imported.takeError()));
        micro = std::move(*imported);
        (*micro)->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                          mlir::Builder(&context).getI64IntegerAttr(m));
        if (auto err = applyBucketFlag(opts.synth, *micro))
          return err;
      }
      mlir::ModuleOp graph = m > 1 ? *micro : **module;
      SynthInputs inputs{graph,
                         *spec,
                         (*clusterText)->getBuffer().str(),
                         eval,
                         planContext,
                         [&] {
                           return baselinesOf(graph, m > 1 ? microBaselines
                                                           : baselines);
                         }};
      if (auto err = synthesizeAndWrite(opts.synth, inputs, opts.outDir, os))
        return err;
      if (m == 1)
        return llvm::Error::success();
      // DIR/graph.mlir is the program the plan runs: one micro-batch.
      return writeFile(std::string(graphPath), [&](llvm::raw_ostream &os) {
        (*micro)->print(os);
        os << "\n";
      });
    };
    auto progress = [](llvm::StringRef lines) {
      llvm::SmallVector<llvm::StringRef> parts;
      lines.split(parts, '\n');
      for (llvm::StringRef line : parts)
        llvm::errs() << "weftc: " << line << "\n";
    };
    if (auto err = withAccumulation(*counts, *io->batch, attempt, progress))
      return reportError("weftc", std::move(err));
  }
  if (!synthesise)
    llvm::errs() << "weftc: wrote " << graphPath << " and " << summaryPath
                 << (spec ? "" : " (no --cluster: no plan)") << "\n";
  return ExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  const char *overview =
      "weftc: compile a training job for a heterogeneous GPU cluster\n\n"
      "  weftc model.onnx [--cluster spec.yaml] [--global-batch N]\n"
      "      prints the model summary (ops, parameters, activations, training\n"
      "      FLOPs) and, with a cluster, the lower bound of any plan.\n"
      "  weftc model.onnx --cluster spec.yaml --baselines [-o dir]\n"
      "      also builds the baselines DP-EV, DP-CP and TP-DP as spmd plans "
      "and\n"
      "      prints their estimated step time, memory and communication "
      "share.\n"
      "  weftc model.onnx --cluster spec.yaml -o dir [--explain]\n"
      "      synthesises a plan (A* over the distributed instruction set,\n"
      "      sharding ratios by LP, integer shard sizes by Z3) and writes\n"
      "      dir/plan.mlir and dir/plan.json (docs/PlanFormat.md); a repeated\n"
      "      run with the same model, cluster and options uses the plan "
      "cache.\n"
      "  weftc model.onnx --cluster spec.yaml -o dir --stages N|auto\n"
      "      a pipelined plan: N stages (auto: the fastest of 1 to 8), each\n"
      "      on its own group of nodes, M micro-batches under 1F1B\n"
      "      (--micro-batches M; default 4 N or a doubling of it, by the\n"
      "      stage table's estimate; docs/Pipeline.md).\n"
      "  weftc model.onnx --cluster spec.yaml --cells --global-batch N\n"
      "      estimates every Cell of the cluster (GPU types and counts,\n"
      "      stages) and prints the table and the best Cells "
      "(docs/Cells.md).\n"
      "  weftc --cluster spec.yaml\n"
      "      prints the cluster: devices, classes, peak FLOP/s.\n\n"
      "Exit codes: 0 success, 1 bad input, 2 no feasible plan, 3 verification\n"
      "failed, 4 internal error.\n";
  if (!parseCommandLine(argc, argv, "weftc", overview))
    return ExitBadInput;
  return run(opts);
}
