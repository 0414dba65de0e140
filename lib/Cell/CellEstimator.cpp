//===- CellEstimator.cpp - Cell estimates from the synthesizer ------------===//

#include "weft/Cell/CellEstimator.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Cell/SubCluster.h"
#include "weft/Eval/PlanRatios.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/PipelineSynth.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <ctime>
#include <deque>
#include <numeric>

using namespace weft;
using namespace weft::cell;
using synth::RepVector;
using synth::SearchOutcome;
using synth::SearchSpace;
using synth::StepChoice;

namespace {
double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

/// CPU seconds of this thread.
double threadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/// The device type of representative `r` of `space`.
std::string repType(const SearchSpace &space, unsigned r) {
  unsigned device = space.repDevices[r];
  spmd::MeshAttr mesh = space.mesh;
  return mesh.getClassOfNode(device / space.axisSizes[1]).getType().str();
}

/// `choices` name an option, a recomputation and a storage option that
/// exist at every position of `space` (plans of other Cells may not).
bool validIn(SearchSpace &space, llvm::ArrayRef<StepChoice> choices) {
  if (choices.size() != space.numPositions())
    return false;
  for (unsigned p = 0; p < space.numPositions(); ++p) {
    const synth::OpInfo &op = space.ops[p];
    const StepChoice &c = choices[p];
    if (c.option >= op.options.size() || (c.recompute && !space.recomputes()))
      return false;
    const synth::OpOption &option = op.options[c.option];
    if (c.storage.size() < op.operands.size())
      return false;
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const synth::ValueInfo &info = space.values[v];
      if (info.defPos >= 0 || info.uses.front() != p ||
          option.operands[i] == synth::kNoDist)
        continue;
      if (c.storage[i] >= space.storageOptions(v, option.operands[i]).size())
        return false;
    }
  }
  return true;
}

bool fitsIn(const SearchSpace &space, const RepVector &peak) {
  for (unsigned r = 0; r < space.numReps(); ++r)
    if (r >= peak.size() || peak[r] > space.capacity()[r])
      return false;
  return true;
}
} // namespace

/// Choice sequences of earlier Cells, per micro-batch count: the plans a
/// new Cell replays on its own space.
struct CellEstimator::Memo {
  std::map<unsigned, std::deque<std::vector<StepChoice>>> plans;
};

CellEstimator::CellEstimator(ModelGraphs &model, const ClusterSpec &cluster,
                             const CellOptions &options)
    : model(model), cluster(cluster), options(options),
      memo(std::make_unique<Memo>()) {}

CellEstimator::~CellEstimator() = default;

double CellEstimator::lowerBound(const Cell &cell) const {
  double peak = 0;
  for (const auto &[type, count] : cell.devices)
    if (const DeviceType *t = cluster.findType(type))
      peak += t->peakFlops(options.eval.dtype) * count;
  return peak > 0 ? model.trainingFlops() / peak : 0;
}

/// Fills the per-type memory peaks and samples/s of a feasible estimate.
static void finish(CellEstimate &out, int64_t batch) {
  out.feasible = true;
  out.reason.clear();
  out.samplesPerSecond =
      out.iterationSeconds > 0 ? double(batch) / out.iterationSeconds : 0;
}

llvm::Expected<CellEstimate> CellEstimator::full(const Cell &cell,
                                                 const ClusterSpec &sub) {
  auto start = std::chrono::steady_clock::now();
  CellEstimate out;
  out.cell = cell;
  out.source = EstimateSource::Full;
  std::string reason = "no plan fits memory";
  for (unsigned m = 1; m <= options.maxMicroBatches; m *= 2) {
    if (m > 1 && (!model.batchSymbolic() || model.globalBatch() % m != 0))
      break;
    auto graph = model.graph(m);
    if (!graph)
      return graph.takeError();
    SynthOptions synth;
    synth.eval = options.eval;
    auto result = synthesize(*graph, sub, synth);
    if (!result) {
      llvm::Error err = result.takeError();
      std::string message;
      if (isMemoryShortfall(err, nullptr, &message)) {
        reason = message;
        continue;
      }
      return std::move(err);
    }
    EvalOptions eval = options.eval;
    eval.overlapGradientSync = true;
    auto estimate = evaluatePlan(*result->plan, sub, eval);
    if (!estimate)
      return estimate.takeError();
    if (!estimate->fits) {
      reason = "the synthesised plan does not fit memory";
      continue;
    }
    out.iterationSeconds = estimate->stepSeconds;
    out.microBatches = m;
    for (const DeviceMemoryEstimate &d : estimate->memory) {
      double &peak = out.peakMemoryBytes[d.type];
      peak = std::max(peak, d.peakBytes());
    }
    finish(out, model.globalBatch());
    break;
  }
  if (!out.feasible)
    out.reason = reason;
  out.wallSeconds = secondsSince(start);
  ++counters.fullSyntheses;
  counters.fullSeconds += out.wallSeconds;
  return out;
}

std::vector<double> CellEstimator::speedRatios(const ClusterSpec &sub,
                                               mlir::ModuleOp graph) {
  std::vector<double> ratios;
  double total = 0;
  for (const DeviceClass &c : sub.classes) {
    const DeviceType &type = sub.deviceTypes[c.typeIndex];
    auto [it, inserted] = computeOf.try_emplace(type.name, 0.0);
    if (inserted)
      it->second = estimateStepCompute(graph, type, options.eval.dtype,
                                       options.eval.profile)
                       .seconds;
    double w =
        it->second > 0 ? 1 / it->second : type.peakFlops(options.eval.dtype);
    ratios.push_back(w);
    total += w * c.devices.size();
  }
  for (double &r : ratios)
    r /= total;
  return ratios;
}

llvm::Expected<CellEstimate> CellEstimator::pipelined(const Cell &cell,
                                                      const ClusterSpec &sub) {
  auto start = std::chrono::steady_clock::now();
  CellEstimate out;
  out.cell = cell;
  out.source = EstimateSource::Full;
  PipelineOptions pipeline;
  pipeline.stages = cell.stages;
  SynthOptions synth;
  synth.eval = options.eval;
  auto graphAt = [&](int64_t m) { return model.importAt(m); };
  auto result =
      synthesizePipeline(graphAt, model.globalBatch(), sub, pipeline, synth);
  ++counters.pipelineSyntheses;
  counters.fullSeconds += secondsSince(start);
  out.wallSeconds = secondsSince(start);
  if (!result) {
    // No plan fits memory (exit 2) or S does not fit the Cell (more stages
    // than nodes or cut points, exit 1): an infeasible Cell, with why.
    llvm::Error err = result.takeError();
    std::string message;
    if (isMemoryShortfall(err, nullptr, &message)) {
      out.reason = message;
      return out;
    }
    llvm::Error other = llvm::handleErrors(
        std::move(err), [&](std::unique_ptr<WeftError> e) -> llvm::Error {
          if (e->getCode() != ExitBadInput && e->getCode() != ExitInfeasible)
            return llvm::Error(std::move(e));
          out.reason = e->getMessage();
          return llvm::Error::success();
        });
    if (other)
      return std::move(other);
    return out;
  }
  if (!result->estimate.fits) {
    out.reason = "the pipelined plan does not fit memory";
    return out;
  }
  out.iterationSeconds = result->estimate.stepSeconds;
  out.microBatches = unsigned(result->microBatches);
  for (const DeviceMemoryEstimate &d : result->estimate.memory) {
    double &peak = out.peakMemoryBytes[d.type];
    peak = std::max(peak, d.peakBytes());
  }
  finish(out, model.globalBatch());
  return out;
}

llvm::Expected<CellEstimate>
CellEstimator::fastAt(const Cell &cell, const ClusterSpec &sub, unsigned m) {
  CellEstimate out;
  out.cell = cell;
  out.source = EstimateSource::Fast;
  auto graph = model.graph(m);
  if (!graph)
    return graph.takeError();
  std::optional<SearchOutcome> best;
  std::unique_ptr<SearchSpace> space;
  bool fromMemo = false;
  // Without recomputation first; with it when nothing fits (as synthesize()
  // does with Recompute::Auto).
  for (bool recompute : {false, true}) {
    double t0 = threadCpu();
    // No A* runs here: the space is built without its bounds.
    auto built =
        SearchSpace::build(*graph, sub, options.eval, speedRatios(sub, *graph),
                           recompute, /*bounds=*/false);
    if (!built)
      return built.takeError();
    space = std::move(*built);
    double t1 = threadCpu();
    counters.buildCpu += t1 - t0;
    for (unsigned r = 0; r < space->numReps(); ++r) {
      double need = space->memoryFloor(0, r);
      if (need > space->capacity()[r]) {
        out.provedInfeasible = true;
        out.reason = llvm::formatv("no plan fits memory: a {0} needs at "
                                   "least {1} of its {2} even with every op "
                                   "at its least memory",
                                   repType(*space, r), formatBytes(need),
                                   formatBytes(space->capacity()[r]))
                         .str();
        break;
      }
    }
    if (!out.reason.empty())
      return out;
    auto runSeeds = [&] {
      double t = threadCpu();
      if (options.oneSeed) {
        if (auto seed = synth::dataParallelSeed(*space, false))
          if (!best || seed->cost < best->cost)
            best = std::move(seed);
      } else {
        for (SearchOutcome &seed : synth::seedPlans(*space))
          if (!best || seed.cost < best->cost)
            best = std::move(seed);
      }
      counters.seedCpu += threadCpu() - t;
    };
    bool seeded = memo->plans[m].size() < options.seedsBelow;
    if (seeded)
      runSeeds();
    double t2 = threadCpu();
    for (const std::vector<StepChoice> &choices : memo->plans[m]) {
      if (!validIn(*space, choices))
        continue;
      ++counters.replays;
      RepVector peak;
      std::optional<double> cost =
          synth::replay(*space, choices, nullptr, &peak);
      if (!cost || !fitsIn(*space, peak) || (best && *cost >= best->cost))
        continue;
      best = SearchOutcome();
      best->found = true;
      best->cost = *cost;
      best->choices = choices;
      best->peakMemory = peak;
      fromMemo = true;
    }
    counters.replayCpu += threadCpu() - t2;
    if (!best && !seeded)
      runSeeds();
    if (best)
      break;
  }
  if (!best) {
    out.reason = "no seed plan nor earlier Cell's plan fits memory (fast "
                 "mode)";
    return out;
  }
  counters.replayWins += fromMemo;
  if (options.improveSteps) {
    double t3 = threadCpu();
    synth::improvePlan(*space, *best, true, options.improveSteps);
    counters.improveCpu += threadCpu() - t3;
  }
  auto &kept = memo->plans[m];
  if (!llvm::is_contained(kept, best->choices)) {
    kept.push_front(best->choices);
    if (kept.size() > options.memoPlans)
      kept.pop_back();
  }
  // The search's cost is per micro-batch (SearchSpace::microBatches).
  out.iterationSeconds = best->cost * double(m);
  if (options.evaluate) {
    auto plan = buildPlanOf(*space, *graph, best->choices);
    if (!plan)
      return plan.takeError();
    if (options.ratioLP && sub.classes.size() > 1) {
      // As one round of synthesize()'s alternation; a failed LP keeps the
      // plan at its ratios.
      double t4 = threadCpu();
      ratio::AssignOptions assign;
      assign.maxRounds = options.lpRounds;
      if (auto assigned =
              ratio::assignRatios(**plan, sub, options.eval, assign)) {
        if (options.selectCollectives)
          if (auto selected =
                  ratio::selectCollectives(**plan, sub, options.eval);
              !selected)
            llvm::consumeError(selected.takeError());
      } else {
        llvm::consumeError(assigned.takeError());
      }
      counters.ratioCpu += threadCpu() - t4;
    }
    EvalOptions eval = options.eval;
    eval.overlapGradientSync = true;
    double t5 = threadCpu();
    auto estimate = evaluatePlan(**plan, sub, eval);
    counters.evalCpu += threadCpu() - t5;
    if (!estimate)
      return estimate.takeError();
    out.iterationSeconds = estimate->stepSeconds;
    out.peakMemoryBytes.clear();
    for (const DeviceMemoryEstimate &d : estimate->memory) {
      double &peak = out.peakMemoryBytes[d.type];
      peak = std::max(peak, d.peakBytes());
    }
    if (!estimate->fits) {
      out.reason = "the plan does not fit memory at the LP's ratios";
      return out;
    }
    finish(out, model.globalBatch());
    return out;
  }
  out.microBatches = m;
  for (unsigned r = 0; r < space->numReps(); ++r) {
    double &peak = out.peakMemoryBytes[repType(*space, r)];
    peak = std::max(peak, best->peakMemory[r]);
  }
  finish(out, model.globalBatch());
  return out;
}

llvm::Expected<CellEstimate> CellEstimator::fast(const Cell &cell,
                                                 const ClusterSpec &sub) {
  if (!calibrated) {
    // The model's first Cell: in full, and the ratio of the two modes on it.
    auto first = full(cell, sub);
    if (!first || !first->feasible)
      return first;
    auto raw = fastAt(cell, sub, first->microBatches);
    if (!raw)
      return raw.takeError();
    if (raw->feasible && raw->iterationSeconds > 0) {
      scale = first->iterationSeconds / raw->iterationSeconds;
      calibrated = true;
    }
    return first;
  }
  auto start = std::chrono::steady_clock::now();
  CellEstimate out;
  for (unsigned m = 1; m <= options.maxMicroBatches; m *= 2) {
    if (m > 1 && (!model.batchSymbolic() || model.globalBatch() % m != 0))
      break;
    auto at = fastAt(cell, sub, m);
    if (!at)
      return at.takeError();
    out = std::move(*at);
    if (out.feasible)
      break;
    if (!out.provedInfeasible) {
      // Memory is tight: no seed and no earlier plan fits, yet the memory
      // floor does not rule a plan out. Such Cells are few and the fast
      // mode's candidates judge them worst: synthesised in full.
      ++counters.fallbacks;
      return full(cell, sub);
    }
  }
  if (out.feasible) {
    if (!options.evaluate)
      out.iterationSeconds *= scale;
    finish(out, model.globalBatch());
  }
  out.wallSeconds = secondsSince(start);
  ++counters.fastEstimates;
  counters.fastSeconds += out.wallSeconds;
  return out;
}

llvm::Expected<CellEstimate> CellEstimator::compute(const Cell &cell) {
  auto sub = buildSubCluster(cluster, cell.devices);
  if (!sub)
    return sub.takeError();
  if (cell.stages == 0)
    return badInput("a Cell has at least one stage");
  if (cell.stages > 1)
    return pipelined(cell, *sub);
  return options.fast ? fast(cell, *sub) : full(cell, *sub);
}

llvm::Expected<CellEstimate> CellEstimator::estimate(const Cell &cell) {
  auto it = answers.find(cell);
  if (it != answers.end()) {
    ++counters.memoHits;
    CellEstimate again = it->second;
    again.memoised = true;
    again.wallSeconds = 0;
    return again;
  }
  auto out = compute(cell);
  if (!out)
    return out.takeError();
  out->lowerBoundSeconds = lowerBound(cell);
  answers[cell] = *out;
  return out;
}

llvm::Expected<std::vector<CellEstimate>>
CellEstimator::estimateAll(llvm::ArrayRef<Cell> cells, bool prune) {
  std::vector<unsigned> order(cells.size());
  std::iota(order.begin(), order.end(), 0);
  if (prune)
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return lowerBound(cells[a]) < lowerBound(cells[b]);
    });
  std::vector<CellEstimate> out(cells.size());
  double best = std::numeric_limits<double>::infinity();
  for (unsigned i : order) {
    double bound = lowerBound(cells[i]);
    if (prune && bound > best) {
      CellEstimate skipped;
      skipped.cell = cells[i];
      skipped.source = EstimateSource::Pruned;
      skipped.lowerBoundSeconds = bound;
      skipped.reason = llvm::formatv("pruned: its lower bound {0} exceeds "
                                     "the best Cell's {1}",
                                     formatSeconds(bound), formatSeconds(best))
                           .str();
      ++counters.pruned;
      out[i] = std::move(skipped);
      continue;
    }
    auto e = estimate(cells[i]);
    if (!e)
      return e.takeError();
    if (e->feasible)
      best = std::min(best, e->iterationSeconds);
    out[i] = std::move(*e);
  }
  return out;
}

std::vector<Cell> cell::enumerateCells(const ClusterSpec &cluster,
                                       unsigned maxStages, bool mixed) {
  DeviceMultiset all = devicesOf(cluster);
  // Per type: 0 (absent), 1, 2, 4, ... and the type's total.
  std::vector<std::pair<std::string, std::vector<unsigned>>> choices;
  for (const auto &[type, total] : all) {
    std::vector<unsigned> counts{0};
    for (unsigned c = 1; c < total; c *= 2)
      counts.push_back(c);
    counts.push_back(total);
    choices.emplace_back(type, counts);
  }
  // Nodes a multiset packs into (SubCluster.h), for the stage counts.
  auto nodesOf = [&](const DeviceMultiset &devices) {
    unsigned nodes = 0;
    for (const auto &[type, count] : devices) {
      unsigned largest = 1;
      for (const Node &n : cluster.nodes)
        if (n.deviceType == type)
          largest = std::max(largest, n.numDevices);
      nodes += (count + largest - 1) / largest;
    }
    return nodes;
  };
  std::vector<Cell> cells;
  std::vector<unsigned> at(choices.size(), 0);
  while (true) {
    DeviceMultiset devices;
    for (unsigned t = 0; t < choices.size(); ++t)
      if (unsigned c = choices[t].second[at[t]])
        devices[choices[t].first] = c;
    if (!devices.empty() && (mixed || devices.size() == 1))
      for (unsigned s = 1; s <= maxStages && s <= nodesOf(devices); ++s)
        cells.push_back({devices, s});
    unsigned t = 0;
    while (t < at.size() && ++at[t] == choices[t].second.size())
      at[t++] = 0;
    if (t == at.size())
      break;
  }
  std::stable_sort(
      cells.begin(), cells.end(), [](const Cell &a, const Cell &b) {
        unsigned na = totalDevices(a.devices), nb = totalDevices(b.devices);
        if (na != nb)
          return na < nb;
        return a < b;
      });
  return cells;
}
