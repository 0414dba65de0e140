//===- PipelineSynth.cpp - Pipelined plans: stages, cuts, device groups ---===//
//
// docs/Pipeline.md "Synthesis". For each stage count tried: the program of
// one micro-batch, its cut table, the DP's partition, one synthesize() per
// stage on its sub-cluster, the stage modules assembled, verified and
// evaluated on the whole cluster.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/PipelineSynth.h"
#include "Spmd/IR/SpmdDialect.h"
#include "StageAssembly.h"
#include "StageCosts.h"
#include "StageProgram.h"
#include "mlir/IR/Builders.h"
#include "weft/Spmd/ProgramBuilder.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/PlanChoice.h"
#include "weft/Synth/StageCuts.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>

using namespace weft;
using namespace weft::synth;

int64_t weft::defaultMicroBatches(unsigned stages, int64_t globalBatch) {
  if (stages <= 1)
    return 1;
  for (int64_t m = 4 * int64_t(stages); m > 1; --m)
    if (globalBatch % m == 0)
      return m;
  return 1;
}

namespace {

/// A plan of one stage count.
struct Attempt {
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  PlanEstimate estimate;
  std::vector<PipelineStageInfo> stages;
};

/// Where an op is, for --explain: its name (from the model), else its
/// location.
std::string locationOf(mlir::Operation *op) {
  if (auto name = op->getLoc().dyn_cast<mlir::NameLoc>())
    return name.getName().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return os.str();
}

EvalOptions withOverlap(const EvalOptions &eval) {
  EvalOptions out = eval;
  out.overlapGradientSync = true;
  return out;
}

/// The single-stage plan (with `m` micro-batches of gradient accumulation).
llvm::Expected<Attempt> singleStage(mlir::ModuleOp graph, int64_t m,
                                    const ClusterSpec &spec,
                                    const SynthOptions &synth) {
  if (m > 1)
    graph->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                   mlir::Builder(graph.getContext()).getI64IntegerAttr(m));
  auto result = synthesize(graph, spec, synth);
  if (!result)
    return result.takeError();
  Attempt out;
  out.plan = std::move(result->plan);
  auto estimate = evaluatePlan(*out.plan, spec, withOverlap(synth.eval));
  if (!estimate)
    return estimate.takeError();
  out.estimate = std::move(*estimate);
  PipelineStageInfo info;
  for (unsigned n = 0; n < spec.numNodes(); ++n)
    info.nodes.push_back(n);
  info.stats = result->stats;
  out.stages.push_back(std::move(info));
  return out;
}

/// The S-stage plan of `graph` (one micro-batch of M).
llvm::Expected<Attempt> pipelined(mlir::ModuleOp graph, unsigned stages,
                                  int64_t m, const ClusterSpec &spec,
                                  const SynthOptions &synth) {
  // As weft-run loads the model for a plan of M micro-batches (the plan's
  // fingerprint); the stages' sub-programs leave it out.
  if (m > 1)
    graph->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                   mlir::Builder(graph.getContext()).getI64IntegerAttr(m));
  auto program = StageProgram::of(graph);
  if (!program)
    return program.takeError();
  ProgramStageCosts costs(*program, spec, synth.eval);
  if (stages > costs.numCuts())
    return badInput("--stages {0}: the program has {1} cut point(s) between "
                    "blocks, so at most {2} stages",
                    stages, costs.numCuts() - 1, costs.numCuts());
  if (stages > costs.numNodes())
    return badInput("--stages {0}: the cluster's {1} nodes form {2} groups "
                    "for stages",
                    stages, spec.numNodes(), costs.numNodes());
  auto partition = chooseStages(costs, stages, m);
  if (!partition) {
    // Recomputation keeps about a quarter of the activations.
    costs.activationShare = 0.25;
    partition = chooseStages(costs, stages, m);
  }
  if (!partition)
    return memoryError(0,
                       "no partition into {0} stages fits memory: the "
                       "parameters with their optimizer state and the "
                       "in-flight activations exceed some group's devices",
                       stages);
  int64_t perNode = devicesPerMeshNode(spec);
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  Attempt out;
  for (unsigned s = 0; s < stages; ++s) {
    unsigned a = costs.position(partition->cuts[s]);
    unsigned b = costs.position(partition->cuts[s + 1]);
    std::vector<unsigned> nodes;
    for (unsigned n = costs.node(partition->nodes[s]);
         n < costs.node(partition->nodes[s + 1]); ++n)
      nodes.push_back(n);
    ClusterSpec sub = subCluster(spec, nodes, unsigned(perNode));
    mlir::OwningOpRef<mlir::ModuleOp> subProgram = program->subProgram(a, b);
    if (synth.progress)
      synth.progress(llvm::formatv("pipeline: stage {0}/{1}: ops {2}..{3} on "
                                   "nodes {4}..{5}",
                                   s, stages, a, b - 1, nodes.front(),
                                   nodes.back())
                         .str());
    auto result = synthesize(*subProgram, sub, synth);
    if (!result)
      return result.takeError();
    if (auto err = makeStageModule(*result->plan, s, stages,
                                   program->crossing(a).size(),
                                   meshNodesOf(spec, nodes)))
      return std::move(err);
    modules.push_back(std::move(result->plan));
    PipelineStageInfo info;
    info.firstOp = a;
    info.endOp = b;
    info.cutAfter = locationOf(program->ops()[b - 1]);
    info.nodes = nodes;
    info.estimatedSeconds = partition->stageSeconds[s];
    info.stats = result->stats;
    out.stages.push_back(std::move(info));
  }
  auto plan =
      assemblePipeline(clusterMesh(graph.getContext(), spec, synth.eval.dtype),
                       m, std::move(modules), modelFingerprint(graph));
  if (!plan)
    return plan.takeError();
  out.plan = std::move(*plan);
  auto estimate = evaluatePlan(*out.plan, spec, withOverlap(synth.eval));
  if (!estimate)
    return estimate.takeError();
  out.estimate = std::move(*estimate);
  return out;
}

} // namespace

llvm::Expected<PipelineResult>
weft::synthesizePipeline(const GraphAtMicroBatches &graphAt,
                         int64_t globalBatch, const ClusterSpec &spec,
                         const PipelineOptions &options,
                         const SynthOptions &synth) {
  auto start = std::chrono::steady_clock::now();
  if (options.stages > spec.numNodes())
    return badInput("--stages {0}: the cluster '{1}' has {2} node(s); a "
                    "stage takes at least one",
                    options.stages, spec.name, spec.numNodes());
  if (options.microBatches < 0 ||
      (options.microBatches > 0 && globalBatch % options.microBatches))
    return badInput("--micro-batches {0} does not split the global batch of "
                    "{1} samples",
                    options.microBatches, globalBatch);
  std::vector<unsigned> counts;
  if (options.stages) {
    counts.push_back(options.stages);
  } else {
    unsigned most =
        std::min<unsigned>(std::max(options.maxStages, 1u), spec.numNodes());
    for (unsigned s = 1; s <= most; ++s)
      counts.push_back(s);
  }
  PipelineResult best;
  bool have = false;
  for (unsigned s : counts) {
    int64_t m = options.microBatches ? options.microBatches
                                     : defaultMicroBatches(s, globalBatch);
    PipelineTrial trial;
    trial.stages = s;
    trial.microBatches = m;
    auto graph = graphAt(m);
    llvm::Expected<Attempt> attempt =
        graph ? (s == 1 ? singleStage(**graph, m, spec, synth)
                        : pipelined(**graph, s, m, spec, synth))
              : llvm::Expected<Attempt>(graph.takeError());
    if (!attempt) {
      llvm::Error err = attempt.takeError();
      if (options.stages)
        return std::move(err);
      trial.error = llvm::toString(std::move(err));
      if (synth.progress)
        synth.progress(
            llvm::formatv("pipeline: {0} stage(s): {1}", s, trial.error).str());
      best.trials.push_back(std::move(trial));
      continue;
    }
    trial.stepSeconds = attempt->estimate.stepSeconds;
    trial.fits = attempt->estimate.fits;
    if (synth.progress && !options.stages)
      synth.progress(llvm::formatv("pipeline: {0} stage(s), {1} "
                                   "micro-batch(es): {2} per step{3}",
                                   s, m, formatSeconds(trial.stepSeconds),
                                   trial.fits ? "" : ", does not fit")
                         .str());
    best.trials.push_back(trial);
    bool better = !have || (trial.fits && !best.estimate.fits) ||
                  (trial.fits == best.estimate.fits &&
                   trial.stepSeconds < best.estimate.stepSeconds);
    if (!better)
      continue;
    have = true;
    best.plan = std::move(attempt->plan);
    best.estimate = std::move(attempt->estimate);
    best.stageInfo = std::move(attempt->stages);
    best.stages = s;
    best.microBatches = m;
  }
  if (!have)
    return memoryError(0, "no plan of 1..{0} stages was built: {1}",
                       counts.back(),
                       best.trials.empty() ? "" : best.trials.back().error);
  if (!best.estimate.fits)
    return shortOfMemory(best.estimate, withOverlap(synth.eval));
  best.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return best;
}
