//===- PipelineDriver.cpp - weftc --stages: pipelined plans ---------------===//

#include "PipelineDriver.h"
#include "Explain.h"
#include "PlanOutput.h"
#include "Spmd/IR/SpmdOps.h"
#include "weft/Emit/StepPicture.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/PlanChoice.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <map>

using namespace weft;

llvm::Expected<unsigned> weft::parseStagesFlag(llvm::StringRef flag) {
  if (flag == "auto")
    return 0u;
  unsigned n = 0;
  if (flag.getAsInteger(10, n) || n == 0)
    return badInput("--stages must be auto or a positive stage count, got "
                    "'{0}'",
                    flag.str());
  return n;
}

/// "2 x V100 + 4 x P100" for the devices of `nodes`.
static std::string devicesOf(const ClusterSpec &spec,
                             llvm::ArrayRef<int64_t> nodes) {
  std::map<std::string, unsigned> count;
  for (int64_t n : nodes)
    count[spec.nodes[n].deviceType] += spec.nodes[n].numDevices;
  std::vector<std::string> parts;
  for (auto &[type, k] : count)
    parts.push_back(std::to_string(k) + " x " + type);
  return llvm::join(parts, " + ");
}

/// The stage table of --explain.
static void printStages(const PipelineResult &result,
                        const PlanEstimate &estimate, const ClusterSpec &spec,
                        llvm::raw_ostream &os) {
  os << llvm::formatv("pipeline:            {0} stages, {1} micro-batches, "
                      "{2}; bubble {3:P} of the devices' time\n",
                      estimate.stages.size(), estimate.microBatches,
                      estimate.schedule, estimate.bubbleFraction);
  for (const StageEstimate &st : estimate.stages) {
    const PipelineStageInfo *info = st.index < result.stageInfo.size()
                                        ? &result.stageInfo[st.index]
                                        : nullptr;
    // The cluster's nodes (the plan's mesh nodes are cuts of them when
    // node sizes differ).
    std::vector<int64_t> clusterNodes(st.nodes);
    if (info)
      clusterNodes.assign(info->nodes.begin(), info->nodes.end());
    std::string nodes = clusterNodes.empty()
                            ? ""
                            : llvm::formatv("{0}..{1}", clusterNodes.front(),
                                            clusterNodes.back())
                                  .str();
    os << llvm::formatv("  stage {0}: nodes {1} ({2})", st.index, nodes,
                        devicesOf(spec, clusterNodes));
    if (info)
      os << llvm::formatv(", ops {0}..{1}, cut after '{2}'", info->firstOp,
                          info->endOp - 1, info->cutAfter);
    os << "\n";
    os << llvm::formatv(
        "           {0} per micro-batch (cut table: {1}), link {2}, tail {3}, "
        "{4} micro-batches in flight, peak {5}, bubble {6:P}\n",
        formatSeconds(st.microBatchSeconds),
        info ? formatSeconds(info->estimatedSeconds) : std::string("-"),
        formatSeconds(st.sendSeconds), formatSeconds(st.onceSeconds),
        st.keptMicroBatches, formatBytes(st.peakMemoryBytes),
        st.bubbleFraction);
  }
}

llvm::Error weft::pipelineAndWrite(const SynthFlags &flags,
                                   const SynthInputs &in, unsigned stages,
                                   const GraphAtMicroBatches &graphAt,
                                   int64_t globalBatch, llvm::StringRef outDir,
                                   llvm::raw_ostream &os) {
  auto options = synthOptionsOf(flags, in.eval);
  if (!options)
    return options.takeError();
  options->progress = [](llvm::StringRef line) {
    llvm::errs() << "weftc: " << line << "\n";
  };
  PipelineOptions popts;
  popts.stages = stages;
  if (flags.microBatches != "auto") {
    int64_t m = 0;
    if (llvm::StringRef(flags.microBatches).getAsInteger(10, m) || m < 1)
      return badInput("--micro-batches must be auto or a positive count, got "
                      "'{0}'",
                      flags.microBatches.getValue());
    popts.microBatches = m;
  }
  auto result =
      synthesizePipeline(graphAt, globalBatch, in.spec, popts, *options);
  if (!result)
    return result.takeError();

  auto baselines = in.baselines();
  if (!baselines)
    return baselines.takeError();
  std::vector<CandidatePlan> candidates;
  for (const BaselineRow &row : **baselines)
    candidates.push_back({row.name, *row.plan});
  auto chosen =
      choosePlan(std::move(result->plan), candidates, in.spec, in.eval);
  if (!chosen)
    return chosen.takeError();
  PlanContext context = in.context;
  SynthesisRecord record;
  record.wallSeconds = result->wallSeconds;
  for (const PipelineStageInfo &info : result->stageInfo) {
    record.expansions += info.stats.expansions;
    record.gap = std::max(record.gap, info.stats.gap);
    record.capped |= info.stats.capped;
    record.alternations += info.stats.alternations;
  }
  context.synthesis = record;
  context.searchStepSeconds = chosen->searchEstimate.stepSeconds;
  context.source = chosen->source;
  if (!popts.stages)
    for (const PipelineTrial &t : result->trials)
      os << llvm::formatv(
          "  stages {0,-2} {1,2} micro-batches: {2}\n", t.stages,
          t.microBatches,
          !t.error.empty() ? "no plan (" + t.error + ")"
                           : formatSeconds(t.stepSeconds) +
                                 (t.fits ? "" : " (does not fit in memory)"));
  const PlanEstimate &own = chosen->searchEstimate;
  os << llvm::formatv(
      "plan:                {0} per step (estimate; {1} stage(s), {2} "
      "micro-batch(es){3}; synthesis {4} wall, {5} expansions)\n",
      formatSeconds(own.stepSeconds), result->stages, result->microBatches,
      own.stages.empty() ? std::string()
                         : llvm::formatv(", {0}, bubble {1:P}", own.schedule,
                                         own.bubbleFraction)
                               .str(),
      formatSeconds(record.wallSeconds), record.expansions);
  context.baselines.clear();
  for (const auto &[name, b] : chosen->candidates) {
    context.baselines.emplace_back(name, b.stepSeconds);
    os << llvm::formatv("  vs {0,-6} {1,10} ({2:F2}x; evaluated like the "
                        "plan, with gradient-sync overlap{3})\n",
                        name, formatSeconds(b.stepSeconds),
                        b.stepSeconds / own.stepSeconds,
                        b.fits ? "" : "; does not fit in memory");
  }
  if (chosen->source != "search")
    os << llvm::formatv("writing {0}: it beats the synthesised plan\n",
                        chosen->source);
  EvalOptions final = in.eval;
  final.overlapGradientSync = true;
  if (!chosen->estimate.fits)
    return shortOfMemory(chosen->estimate, final);
  mlir::OwningOpRef<mlir::ModuleOp> plan = std::move(chosen->plan);
  const PlanEstimate &estimate = chosen->estimate;
  bool pipelined = spmd::isPipelined(*plan);
  if (flags.explain) {
    // The synthesised plan's stages, also when a baseline is written.
    if (result->stages > 1)
      printStages(*result, own, in.spec, os);
    printExplain(*plan, estimate, os);
  }
  if (auto err = writePlanFiles(outDir, *plan, in.spec, estimate, context))
    return err;
  std::string title = llvm::sys::path::filename(context.model).str();
  // The program each rank runs is the micro-batch's.
  mlir::OwningOpRef<mlir::ModuleOp> micro;
  mlir::ModuleOp graph = in.graph;
  if (chosen->source == "search" && result->microBatches > 1) {
    auto g = graphAt(result->microBatches);
    if (!g)
      return g.takeError();
    micro = std::move(*g);
    graph = *micro;
  }
  if (auto err = writeRunnableFiles(outDir, *plan, graph, title))
    return err;
  if (auto err = writeStepPictures(outDir, *plan, in.spec, final, title))
    return err;
  os << "wrote:               " << outDir << "/plan.mlir, " << outDir
     << "/plan.json, " << outDir << "/torch/, " << outDir << "/launch/, "
     << outDir << "/timeline.svg, " << outDir << "/trace.json\n";
  return llvm::Error::success();
}
