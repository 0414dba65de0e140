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
#include <array>
#include <chrono>
#include <limits>
#include <map>

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

/// A synthesised stage plan and its statistics (before it becomes a stage
/// module).
struct StagePlan {
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  SynthStats stats;
};

/// The plan of `partition`'s stages, assembled and evaluated.
llvm::Expected<Attempt>
stagesOf(mlir::ModuleOp graph, const StageProgram &program,
         const ProgramStageCosts &costs, const StagePartition &partition,
         int64_t m, const ClusterSpec &spec, const SynthOptions &synth,
         std::map<std::array<unsigned, 4>, StagePlan> &memo) {
  unsigned stages = partition.cuts.size() - 1;
  int64_t perNode = devicesPerMeshNode(spec);
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  Attempt out;
  for (unsigned s = 0; s < stages; ++s) {
    unsigned a = costs.position(partition.cuts[s]);
    unsigned b = costs.position(partition.cuts[s + 1]);
    std::vector<unsigned> nodes;
    for (unsigned n = costs.node(partition.nodes[s]);
         n < costs.node(partition.nodes[s + 1]); ++n)
      nodes.push_back(n);
    std::array<unsigned, 4> key{a, b, nodes.front(), nodes.back() + 1};
    auto it = memo.find(key);
    if (it == memo.end()) {
      if (synth.progress)
        synth.progress(
            llvm::formatv("pipeline: stage {0}/{1} of {2} micro-batches: ops "
                          "{3}..{4} on nodes {5}..{6}, {7} per micro-batch "
                          "(cut table{10}), {8} of {9} memory",
                          s, stages, m, a, b - 1, nodes.front(), nodes.back(),
                          formatSeconds(partition.stageSeconds[s]),
                          formatBytes(costs.neededBytes(
                              partition.cuts[s], partition.cuts[s + 1],
                              inFlightMicroBatches(s, stages, m),
                              partition.recompute[s])),
                          formatBytes(costs.capacityBytes(
                              partition.nodes[s], partition.nodes[s + 1])),
                          partition.recompute[s] ? ", recomputing" : "")
                .str());
      ClusterSpec sub = subCluster(spec, nodes, unsigned(perNode));
      // The search sees one micro-batch: a device's memory beyond the
      // stage's parameter state at its least (sharded over the group) is
      // split among the in-flight micro-batches, so that k copies of what
      // the search keeps fit (more sharing of parameters only frees room).
      int64_t k = inFlightMicroBatches(s, stages, m);
      double state =
          costs.stateShare(partition.cuts[s], partition.cuts[s + 1],
                           partition.nodes[s], partition.nodes[s + 1]);
      double reserve = synth.eval.reservedMemoryFraction;
      for (DeviceType &type : sub.deviceTypes) {
        double usable = type.memoryBytes() * (1 - reserve);
        if (k > 1 && usable > state)
          type.memoryGB =
              (state + (usable - state) / double(k)) / (1 - reserve) / 1e9;
      }
      mlir::OwningOpRef<mlir::ModuleOp> subProgram = program.subProgram(a, b);
      auto result = synthesize(*subProgram, sub, synth);
      if (!result) {
        // Integer sizes (Z3) may find no room that the continuous ratios
        // left: the speed ratios with the builder's sizes may still fit.
        llvm::Error err = result.takeError();
        if (synth.fixedRatios || !isMemoryShortfall(err))
          return std::move(err);
        if (synth.progress)
          synth.progress(llvm::formatv("pipeline: stage {0}: {1}; again at "
                                       "fixed ratios",
                                       s, llvm::toString(std::move(err)))
                             .str());
        else
          consumeError(std::move(err));
        SynthOptions fixed = synth;
        fixed.fixedRatios = true;
        result = synthesize(*subProgram, sub, fixed);
        if (!result)
          return result.takeError();
      }
      // The stage's mesh names its devices' real memory.
      result->plan->getOperation()->setAttr(
          spmd::SpmdDialect::kMeshAttr,
          clusterMesh(graph.getContext(),
                      subCluster(spec, nodes, unsigned(perNode)),
                      synth.eval.dtype));
      it = memo.try_emplace(key,
                            StagePlan{std::move(result->plan), result->stats})
               .first;
    }
    mlir::OwningOpRef<mlir::ModuleOp> plan(
        llvm::cast<mlir::ModuleOp>(it->second.plan->getOperation()->clone()));
    if (auto err = makeStageModule(*plan, s, stages, program.crossing(a).size(),
                                   meshNodesOf(spec, nodes)))
      return std::move(err);
    modules.push_back(std::move(plan));
    PipelineStageInfo info;
    info.firstOp = a;
    info.endOp = b;
    info.cutAfter = locationOf(program.ops()[b - 1]);
    info.nodes = nodes;
    info.estimatedSeconds = partition.stageSeconds[s];
    info.stats = it->second.stats;
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

/// The S-stage plan of `graph` (one micro-batch of M).
llvm::Expected<Attempt> pipelined(mlir::ModuleOp graph, unsigned stages,
                                  int64_t m, int64_t batch,
                                  const ClusterSpec &spec,
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
  costs.samples = batch / m;
  if (stages > costs.numCuts())
    return badInput("--stages {0}: the program has {1} cut point(s) between "
                    "blocks, so at most {2} stages",
                    stages, costs.numCuts() - 1, costs.numCuts());
  if (stages > costs.numNodes())
    return badInput("--stages {0}: the cluster's {1} nodes form {2} groups "
                    "for stages",
                    stages, spec.numNodes(), costs.numNodes());
  // Stage plans by (first op, end op, first node, end node): a lower
  // headroom repartitions, and stages it keeps are not synthesised again.
  std::map<std::array<unsigned, 4>, StagePlan> memo;
  llvm::Error last = llvm::Error::success();
  // Mixed groups first; when their plans do not fit, groups of one device
  // type (the search balances memory across classes less well than speed).
  for (auto [oneType, headroom] :
       {std::pair{false, kMemoryHeadroom}, std::pair{true, kMemoryHeadroom},
        std::pair{true, 0.6}, std::pair{true, 0.4}}) {
    costs.memoryHeadroom = headroom;
    costs.oneTypePerStage = oneType;
    // Groups of at most a quarter as many devices as a micro-batch has
    // samples, else one per sample, else any.
    std::optional<StagePartition> partition;
    for (int64_t perDevice : {kSamplesPerDevice, int64_t(1), int64_t(0)}) {
      costs.samplesPerDevice = perDevice;
      if ((partition = chooseStages(costs, stages, m)))
        break;
    }
    if (!partition)
      continue;
    consumeError(std::move(last));
    auto attempt =
        stagesOf(graph, *program, costs, *partition, m, spec, synth, memo);
    if (!attempt) {
      last = attempt.takeError();
      if (!isMemoryShortfall(last))
        return std::move(last);
      continue;
    }
    if (attempt->estimate.fits)
      return attempt;
    last = shortOfMemory(attempt->estimate, withOverlap(synth.eval));
    if (synth.progress)
      synth.progress(llvm::formatv("pipeline: {0} stages at {1:P} of memory "
                                   "in the cut table: {2}",
                                   stages, headroom,
                                   llvm::toString(std::move(last)))
                         .str());
    last = memoryError(0, "the {0}-stage plan does not fit memory", stages);
  }
  if (last)
    return std::move(last);
  return memoryError(0,
                     "no partition into {0} stages fits memory: the "
                     "parameters with their optimizer state and the "
                     "in-flight activations (or checkpoints) exceed some "
                     "group's devices, or a group has more devices than a "
                     "micro-batch has samples",
                     stages);
}

/// The micro-batch count of S stages when none is given: among `first`
/// and its doublings that split the batch with at least a stage's share of
/// the devices per micro-batch, the one whose best partition has the least
/// estimated pipeline time (activations and stage times shrink with the
/// micro-batch, the bubble with the count; what each micro-batch costs
/// beyond its share is not in the estimate); else the largest.
llvm::Expected<int64_t> microBatchesFor(const GraphAtMicroBatches &graphAt,
                                        int64_t first, int64_t batch,
                                        unsigned stages,
                                        const ClusterSpec &spec,
                                        const EvalOptions &eval) {
  int64_t least =
      std::max<int64_t>(1, kSamplesPerDevice * spec.numDevices() / stages);
  std::vector<int64_t> counts{first};
  while (batch % (2 * counts.back()) == 0 &&
         batch / (2 * counts.back()) >= least)
    counts.push_back(2 * counts.back());
  if (counts.size() == 1)
    return first;
  auto graph = graphAt(first);
  if (!graph)
    return graph.takeError();
  auto program = StageProgram::of(**graph);
  if (!program)
    return program.takeError();
  ProgramStageCosts costs(*program, spec, eval);
  // Stage times and activations scale with the micro-batch: the table at
  // `first` serves every count.
  int64_t best = counts.back();
  double bestSeconds = std::numeric_limits<double>::infinity();
  for (int64_t m : counts) {
    double scale = double(first) / double(m);
    costs.activationShare = scale;
    costs.samples = batch / m;
    if (auto p = chooseStages(costs, stages, m))
      if (p->pipelineSeconds(m) * scale < bestSeconds * (1 - 1e-9)) {
        bestSeconds = p->pipelineSeconds(m) * scale;
        best = m;
      }
  }
  return best;
}

} // namespace

llvm::Expected<std::optional<PipelineSketch>>
weft::sketchPipeline(mlir::ModuleOp graph, const ClusterSpec &spec,
                     unsigned stages, int64_t microBatches, int64_t globalBatch,
                     const EvalOptions &eval) {
  auto program = StageProgram::of(graph);
  if (!program)
    return program.takeError();
  ProgramStageCosts costs(*program, spec, eval);
  costs.samples = microBatches > 0 ? globalBatch / microBatches : 0;
  if (stages == 0 || stages > costs.numCuts() || stages > costs.numNodes())
    return badInput("{0} stages: the program has {1} cut ranges and the "
                    "cluster {2} node groups",
                    stages, costs.numCuts(), costs.numNodes());
  std::optional<StagePartition> partition;
  for (int64_t perDevice : {kSamplesPerDevice, int64_t(1), int64_t(0)}) {
    costs.samplesPerDevice = perDevice;
    if ((partition = chooseStages(costs, stages, microBatches)))
      break;
  }
  if (!partition)
    return std::optional<PipelineSketch>();
  PipelineSketch out;
  out.pipelineSeconds = partition->pipelineSeconds(microBatches);
  for (unsigned s = 0; s < stages; ++s) {
    PipelineStageInfo info;
    info.firstOp = costs.position(partition->cuts[s]);
    info.endOp = costs.position(partition->cuts[s + 1]);
    info.cutAfter = locationOf(program->ops()[info.endOp - 1]);
    for (unsigned n = costs.node(partition->nodes[s]);
         n < costs.node(partition->nodes[s + 1]); ++n)
      info.nodes.push_back(n);
    info.estimatedSeconds = partition->stageSeconds[s];
    out.stages.push_back(std::move(info));
  }
  return std::optional<PipelineSketch>(std::move(out));
}

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
    if (s > 1 && !options.microBatches) {
      auto fitting =
          microBatchesFor(graphAt, m, globalBatch, s, spec, synth.eval);
      if (!fitting)
        return fitting.takeError();
      m = *fitting;
    }
    PipelineTrial trial;
    trial.stages = s;
    trial.microBatches = m;
    auto graph = graphAt(m);
    llvm::Expected<Attempt> attempt =
        graph ? (s == 1 ? singleStage(**graph, m, spec, synth)
                        : pipelined(**graph, s, m, globalBatch, spec, synth))
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
