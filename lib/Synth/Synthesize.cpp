//===- Synthesize.cpp - Search, build and score a plan --------------------===//
//
// docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Synthesize.h"
#include "SynthRatios.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "weft/Eval/PlanRatios.h"
#include "weft/Spmd/ProgramBuilder.h"
#include "weft/Spmd/ShardGeometry.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/Search.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::synth;
using spmd::AxisDist;
using spmd::DistAttr;

namespace {

std::string printDist(DistAttr d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  for (auto [i, e] : llvm::enumerate(d.getAxes()))
    os << (i ? ", " : "") << e;
  os << "]";
  return s;
}

std::string valueName(const ValueInfo &v, unsigned id) {
  if (!v.name.empty())
    return v.name;
  if (auto loc = v.value.getLoc().dyn_cast<mlir::NameLoc>())
    return loc.getName().str();
  return "%" + std::to_string(id);
}

/// Translates the search's distributions (one segment per extent, ratios
/// only) into the program builder's segments (integer sizes).
struct SegmentMap {
  SearchSpace &space;
  spmd::SegmentTable table;

  int64_t segment(int64_t extent, uint32_t axes, int64_t align) {
    return table.get(extent, space.ratios, axes, align);
  }
  DistAttr translate(DistAttr d, llvm::ArrayRef<int64_t> shape) {
    DistAttr out = d;
    for (auto [a, e] : llvm::enumerate(d.getAxes()))
      if (e.isGather())
        out = out.with(
            a, AxisDist::gather(e.dim, segment(shape[e.dim],
                                               spmd::ShardGeometry::splitAxes(
                                                   d, unsigned(e.dim)),
                                               1)));
    return out;
  }
};

/// The plan choice of a search outcome.
llvm::Expected<spmd::PlanChoice>
planChoiceOf(SearchSpace &space, mlir::ModuleOp graph,
             llvm::ArrayRef<StepChoice> choices, mlir::func::FuncOp main) {
  mlir::MLIRContext *ctx = graph.getContext();
  SegmentMap map{space,
                 spmd::SegmentTable(ctx, spmd::MeshShape::of(space.mesh))};
  spmd::PlanChoice plan;
  plan.mesh = space.mesh;
  plan.arguments.resize(main.getNumArguments());
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  for (auto [p, op] : llvm::enumerate(space.ops))
    position[op.op] = p;
  // Leaves: their storage at first use.
  for (auto [p, op] : llvm::enumerate(space.ops)) {
    const OpOption &option = op.options[choices[p].option];
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const ValueInfo &info = space.values[v];
      if (info.defPos >= 0 || info.uses.front() != p ||
          option.operands[i] == kNoDist)
        continue;
      bool earlier = false;
      for (unsigned j = 0; j < i; ++j)
        earlier |= op.operands[j] == v;
      if (earlier)
        continue;
      const StorageOption &so =
          space.storageOptions(v, option.operands[i])[choices[p].storage[i]];
      DistAttr stored = map.translate(space.dist(so.stored), info.shape);
      if (info.kind == ValueInfo::Kind::Input)
        plan.arguments[info.value.cast<mlir::BlockArgument>().getArgNumber()] =
            stored;
      else
        plan.parameters[info.name] = {stored, so.strategy};
    }
  }
  plan.segments.assign(map.table.all().begin(), map.table.all().end());
  return plan;
}

/// Chooses each op's variants as the search did; the segment of each
/// axis's first Gather is the one the operand already has when it is split
/// the same way (so that no relayout is emitted that the search did not
/// price), else a new one from the table.
spmd::OpChooser chooserOf(SearchSpace &space,
                          llvm::ArrayRef<StepChoice> choices) {
  auto position =
      std::make_shared<llvm::DenseMap<mlir::Operation *, unsigned>>();
  for (auto [p, op] : llvm::enumerate(space.ops))
    (*position)[op.op] = p;
  std::vector<StepChoice> chosen(choices.begin(), choices.end());
  return [&space, position, chosen](
             mlir::Operation *op, llvm::ArrayRef<DistAttr> current,
             spmd::SegmentTable &segments) -> llvm::Expected<spmd::OpChoice> {
    auto it = position->find(op);
    if (it == position->end())
      return makeError(ExitInternal, "synthesis: op '{0}' has no position",
                       op->getName().getStringRef().str());
    const OpInfo &info = space.ops[it->second];
    const OpOption &option = info.options[chosen[it->second].option];
    auto variants = spmd::shardingVariantsOf(op);
    spmd::OpChoice c;
    c.recompute = chosen[it->second].recompute;
    for (unsigned a = 0; a < space.numAxes(); ++a) {
      const graph::ShardingVariant &v = variants[option.perAxis[a]];
      c.variants.push_back(v);
      int64_t seg = -1;
      bool done = false;
      auto firstGather = [&](llvm::ArrayRef<graph::AxisLayout> layouts,
                             llvm::ArrayRef<unsigned> values,
                             llvm::ArrayRef<DistId> dists, bool operands) {
        for (auto [i, l] : llvm::enumerate(layouts)) {
          if (done || !l.isGather() || i >= values.size() ||
              dists[i] == kNoDist)
            continue;
          done = true;
          const ValueInfo &val = space.values[values[i]];
          uint32_t axes = spmd::ShardGeometry::splitAxes(space.dist(dists[i]),
                                                         unsigned(l.dim));
          // The segment the operand is already split with along that dim
          // (on any axis): reusing it keeps the relayout the search priced.
          if (operands && i < current.size() && current[i]) {
            for (const AxisDist &e : current[i].getAxes()) {
              if (!e.isGather() || e.dim != l.dim || e.segment < 0 ||
                  e.segment >= int64_t(segments.size()))
                continue;
              auto sizes = segments.at(e.segment).getSizes();
              int64_t align = l.align;
              bool aligned =
                  !sizes || llvm::all_of(sizes.asArrayRef(), [&](int64_t x) {
                    return x % align == 0;
                  });
              if (aligned) {
                seg = e.segment;
                return;
              }
            }
          }
          seg = segments.get(val.shape[l.dim], space.ratios, axes, l.align);
        }
      };
      firstGather(v.operands, info.operands, option.operands, true);
      firstGather(v.results, info.results, option.results, false);
      c.segments.push_back(seg);
    }
    return c;
  };
}

std::vector<ExplainRow> explainOf(SearchSpace &space,
                                  llvm::ArrayRef<StepChoice> choices) {
  std::vector<StepDetail> details;
  replay(space, choices, &details);
  std::vector<ExplainRow> rows;
  for (auto [p, op] : llvm::enumerate(space.ops)) {
    const OpOption &option = op.options[choices[p].option];
    ExplainRow row;
    row.op = op.op->getName().getStringRef().str();
    if (auto loc = op.op->getLoc().dyn_cast<mlir::NameLoc>())
      row.location = loc.getName().str();
    for (auto [a, v] : llvm::enumerate(option.perAxis))
      row.variant += (a ? ", " : "") + op.variantNames[v];
    row.recompute = choices[p].recompute;
    for (DistId d : option.operands)
      row.operands.push_back(d == kNoDist ? "-" : printDist(space.dist(d)));
    for (DistId d : option.results)
      row.results.push_back(printDist(space.dist(d)));
    if (p < details.size()) {
      for (const StepDetail::Relayout &r : details[p].relayouts)
        row.collectives.push_back({valueName(space.values[r.value], r.value),
                                   printDist(space.dist(r.from)),
                                   printDist(space.dist(r.to)), r.collectives,
                                   r.bytes, r.seconds});
      row.computeSeconds = details[p].computeSeconds;
      row.commSeconds = details[p].commSeconds;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace

namespace {
/// One search at fixed ratios and the plan it built.
struct Round {
  std::unique_ptr<SearchSpace> space;
  SearchOutcome found;
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  /// The evaluator's step time of `plan`.
  double evaluated = 0;
};

mlir::func::FuncOp mainOf(mlir::ModuleOp graph) {
  mlir::func::FuncOp main;
  for (auto f : graph.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!main || f.getName() == "main"))
      main = f;
  return main;
}

/// The representative whose peak memory most exceeds its capacity (the
/// least short one when all fit), and by how many bytes.
std::pair<unsigned, double> worstRep(SearchSpace &space,
                                     const RepVector &peakMemory) {
  unsigned worst = 0;
  double lack = -std::numeric_limits<double>::infinity();
  for (unsigned r = 0; r < space.numReps(); ++r) {
    double short_ = peakMemory[r] - space.capacity()[r];
    if (short_ > lack) {
      lack = short_;
      worst = r;
    }
  }
  return {worst, lack};
}

std::string deviceTypeOf(SearchSpace &space, unsigned device) {
  return space.mesh.getClassOfNode(device / space.axisSizes[1]).getType().str();
}

/// The error for a search that found nothing.
llvm::Error noPlanError(SearchSpace &space, const SearchLimits &limits,
                        const SearchOutcome &found) {
  // A capped search names the device short of memory under the seed plan
  // nearest to fitting (a second search would hit the same limits); a
  // finished one searches again ignoring memory for the best plan.
  std::optional<SearchOutcome> best;
  const char *under = "the best plan found";
  if (found.capped) {
    under = "the seed plan nearest to fitting";
    if (auto nearest = nearestSeed(space))
      best = std::move(nearest->first);
    if (!best)
      return makeError(ExitInfeasible,
                       "synthesis stopped by its limits after {0} expansions "
                       "with no plan found",
                       found.expansions);
  } else {
    SearchLimits relaxed = limits;
    relaxed.memoryPruning = false;
    SearchOutcome any = search(space, relaxed);
    if (!any.found)
      return makeError(ExitInfeasible,
                       any.capped ? "no plan found within the search limits"
                                  : "no plan exists for this program on "
                                    "this mesh");
    best = std::move(any);
  }
  auto [worst, lack] = worstRep(space, best->peakMemory);
  unsigned device = space.repDevices[worst];
  // One plan's overflow, not a bound over all plans: not given (a caller
  // skipping micro-batch counts by it could skip one that fits).
  return memoryError(0,
                     "no plan fits in memory{0}: under {1}, mesh device {2} "
                     "({3}) lacks {4}",
                     found.capped ? " within the search limits" : "", under,
                     device, deviceTypeOf(space, device), formatBytes(lack));
}

} // namespace

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
weft::buildPlanOf(SearchSpace &space, mlir::ModuleOp graph,
                  llvm::ArrayRef<StepChoice> choices) {
  mlir::func::FuncOp main = mainOf(graph);
  auto choice = planChoiceOf(space, graph, choices, main);
  if (!choice)
    return choice.takeError();
  auto plan = spmd::buildProgram(graph, *choice, chooserOf(space, choices));
  if (!plan)
    return makeError(ExitInternal, "synthesis: the plan does not build: {0}",
                     llvm::toString(plan.takeError()));
  if (mlir::failed(mlir::verify(**plan)))
    return makeError(ExitInternal, "synthesis: the plan does not verify");
  return std::move(*plan);
}

namespace {
/// Reports each synthesis phase that took a second or more, as a progress
/// line ("synthesis: ratio LP took 3.2 s").
class PhaseClock {
public:
  explicit PhaseClock(const std::function<void(llvm::StringRef)> &progress)
      : progress(progress) {}
  void lap(llvm::StringRef phase) {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - mark).count();
    mark = now;
    if (progress && seconds >= 1)
      progress(
          llvm::formatv("synthesis: {0} took {1:f1} s", phase, seconds).str());
  }

private:
  const std::function<void(llvm::StringRef)> &progress;
  std::chrono::steady_clock::time_point mark = std::chrono::steady_clock::now();
};

/// Builds the space at `ratios` (empty: ∝ speed), searches it and builds,
/// verifies and scores the plan. With `giveUp`, a space where no seed plan
/// fits memory is reported infeasible without searching, and the space is
/// handed to `*giveUp` (the caller moves to ratios chosen under memory,
/// memoryRatios, which prices the seeds of that space).
llvm::Expected<Round>
searchRound(mlir::ModuleOp graph, const ClusterSpec &spec,
            const SynthOptions &options, llvm::ArrayRef<double> ratios,
            const SearchLimits &limits, bool recompute, PhaseClock &clock,
            std::unique_ptr<SearchSpace> *giveUp = nullptr) {
  auto built = SearchSpace::build(graph, spec, options.eval, ratios, recompute);
  if (!built)
    return built.takeError();
  clock.lap("search space");
  Round round;
  round.space = std::move(*built);
  SearchSpace &space = *round.space;
  // The memory floor proves infeasibility without searching: the least
  // memory every op needs already exceeds some device's capacity.
  for (unsigned r = 0; r < space.numReps(); ++r) {
    double need = space.memoryFloor(0, r);
    if (need > space.capacity()[r]) {
      unsigned device = space.repDevices[r];
      return memoryError(
          need / space.capacity()[r],
          "no plan fits in memory: mesh device {0} ({1}) lacks {3} "
          "even with every op at its least memory (needs {2} at the "
          "search's ratios)",
          device, deviceTypeOf(space, device), formatBytes(need),
          formatBytes(need - space.capacity()[r]));
    }
  }
  // The seeds, unimproved (scored by the evaluator below) and improved (the
  // search's incumbents).
  std::vector<SearchOutcome> seeds = seedPlans(space, limits.memoryPruning);
  SearchLimits own = limits;
  own.seeds = std::make_shared<const std::vector<SearchOutcome>>(
      improveSeeds(space, seeds, limits.memoryPruning));
  clock.lap("seed plans and their local improvement");
  // The caller answers this one with another round, so it names no device.
  if (giveUp && own.seeds->empty()) {
    *giveUp = std::move(round.space);
    return memoryError(0, "no seed plan fits in memory at these ratios");
  }
  round.found = search(space, own);
  clock.lap("search");
  if (!round.found.found)
    return noPlanError(space, limits, round.found);
  struct Built {
    mlir::OwningOpRef<mlir::ModuleOp> plan;
    double evaluated = 0;
  };
  auto buildAndScore =
      [&](llvm::ArrayRef<StepChoice> choices) -> llvm::Expected<Built> {
    auto plan = buildPlanOf(space, graph, choices);
    if (!plan)
      return plan.takeError();
    auto estimate = evaluatePlan(**plan, spec, options.eval);
    if (!estimate)
      return estimate.takeError();
    return Built{std::move(*plan), estimate->stepSeconds};
  };
  // The evaluator is the only scorer: where the search's pricing and the
  // scored plan disagree (docs/Synthesis.md "The plan"), the seeds
  // (seedPlans), unimproved and improved, scored by the evaluator too, are
  // kept when they are better (the search's own figures, expansions and
  // gap, stay).
  auto scored = buildAndScore(round.found.choices);
  if (!scored)
    return scored.takeError();
  std::vector<const SearchOutcome *> candidates;
  for (const SearchOutcome &seed : seeds)
    candidates.push_back(&seed);
  for (const SearchOutcome &seed : *own.seeds)
    candidates.push_back(&seed);
  std::vector<std::vector<StepChoice>> tried{round.found.choices};
  for (const SearchOutcome *seed : candidates) {
    if (llvm::is_contained(tried, seed->choices))
      continue;
    tried.push_back(seed->choices);
    // A seed whose plan cannot be built or scored is no candidate; the
    // search's own plan was built above.
    auto other = buildAndScore(seed->choices);
    if (!other) {
      llvm::consumeError(other.takeError());
      continue;
    }
    if (other->evaluated < scored->evaluated) {
      scored = std::move(other);
      round.found.choices = seed->choices;
      round.found.cost = seed->cost;
      round.found.peakMemory = seed->peakMemory;
    }
  }
  round.evaluated = scored->evaluated;
  round.plan = std::move(scored->plan);
  clock.lap("building and scoring the plan and seeds");
  return round;
}

/// Per-class ratios for the next search from the plan's (the LP's) ratios.
std::vector<double> searchRatiosOf(mlir::ModuleOp plan,
                                   const ClusterSpec &spec) {
  auto rows = ratio::planRatios(plan);
  if (!rows) {
    llvm::consumeError(rows.takeError());
    return {};
  }
  return classRatiosOf(*rows, spec);
}

/// Success when `err` is "no plan fits" (exit 2), which the caller answers
/// with another round; any other error as it is.
llvm::Error unlessInfeasible(llvm::Error err) {
  return llvm::handleErrors(std::move(err),
                            [](std::unique_ptr<WeftError> e) -> llvm::Error {
                              if (e->getCode() == ExitInfeasible)
                                return llvm::Error::success();
                              return llvm::Error(std::move(e));
                            });
}

/// |now / was − 1|; a class that had no share moves infinitely when it gets
/// one, and not at all when it still has none.
double relativeMove(double now, double was) {
  if (was > 0)
    return std::fabs(now / was - 1);
  return now > 0 ? std::numeric_limits<double>::infinity() : 0;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}
} // namespace

namespace {
/// synthesize() in named steps: the first round (with the recomputation and
/// memory-ratio fallbacks), the alternation with the ratio LP, and the
/// integer sizes of the best plan.
class Synthesizer {
public:
  Synthesizer(mlir::ModuleOp graph, const ClusterSpec &spec,
              const SynthOptions &options)
      : graph(graph), spec(spec), options(options),
        start(std::chrono::steady_clock::now()), clock(options.progress) {
    limits = limitsOf(options);
  }

  llvm::Expected<SynthResult> run();

private:
  static SearchLimits limitsOf(const SynthOptions &options);
  void dump(llvm::StringRef stage, mlir::ModuleOp plan) const {
    if (options.dump)
      options.dump(stage, plan);
  }
  void progress(const llvm::Twine &line) const {
    if (options.progress)
      options.progress(line.str());
  }
  /// The first round's search and plan.
  llvm::Expected<Round> firstRound();
  /// One round of the alternation: LP, collective choice, scoring, and a
  /// search at the LP's ratios when they moved. False when it ends.
  bool alternate(unsigned round);
  /// A round that cannot finish ends the alternation with the best plan so
  /// far; the reason is reported (a progress line and SynthStats).
  void stopAlternation(unsigned round, llvm::StringRef stage, llvm::Error err);
  /// Integer sizes (Z3) of the best plan, checked, and the result.
  llvm::Expected<SynthResult> finish();

  mlir::ModuleOp graph;
  const ClusterSpec &spec;
  const SynthOptions &options;
  std::chrono::steady_clock::time_point start;
  PhaseClock clock;
  SearchLimits limits;
  /// --time-limit is shared by all rounds; the default backstop applies to
  /// each search alone, so that the expansion limits (not the clock) end
  /// default searches and their results are deterministic.
  double timeBudget = 0;
  bool recompute = false;
  SynthStats stats;
  /// The round whose search found the best plan (for the explain rows) and
  /// the best plan (possibly with the LP's ratios).
  Round best;
  mlir::OwningOpRef<mlir::ModuleOp> bestPlan, current;
  double bestCost = 0, lastCost = 0;
  /// The per-class ratios the last search ran at.
  std::vector<double> searchedAt;
};
} // namespace

SearchLimits Synthesizer::limitsOf(const SynthOptions &options) {
  SearchLimits limits;
  limits.admissible = options.heuristic == SynthOptions::Heuristic::Admissible;
  limits.memo = options.memo;
  limits.maxExpansions = options.maxExpansions;
  limits.timeLimitSeconds = options.timeLimitSeconds;
  if (!options.maxExpansions && options.timeLimitSeconds <= 0) {
    limits.maxExpansions = kDefaultMaxExpansions;
    limits.timeLimitSeconds = kDefaultTimeLimitSeconds;
    limits.stopWhenHopeless = true;
    limits.plainFirst = true;
  }
  limits.maxStateBytes =
      options.maxStateBytes ? options.maxStateBytes : kDefaultMaxStateBytes;
  limits.progress = options.progress;
  return limits;
}

llvm::Expected<Round> Synthesizer::firstRound() {
  // Recomputation: offered from the start (Always), or once no plan fits
  // memory without it (Auto); later rounds keep the first round's choice.
  // When no plan fits at ratios ∝ speed either, the ratios are chosen under
  // memory (memoryRatios) and searched again; the last round at speed
  // ratios gives up at once when no seed plan fits, rather than search. One
  // device class has no ratios to move.
  // Only "no plan fits" moves on; any other error is returned as is.
  recompute = options.recompute == SynthOptions::Recompute::Always;
  bool memoryFallback = !options.fixedRatios && spec.classes.size() > 1;
  bool lastAtSpeed =
      recompute || options.recompute == SynthOptions::Recompute::Never;
  // The last speed-ratio space, when that round gave up for memoryRatios.
  std::unique_ptr<SearchSpace> atSpeed;
  auto first = searchRound(graph, spec, options, {}, limits, recompute, clock,
                           memoryFallback && lastAtSpeed ? &atSpeed : nullptr);
  if (!first && !recompute &&
      options.recompute == SynthOptions::Recompute::Auto) {
    if (llvm::Error other = unlessInfeasible(first.takeError()))
      return std::move(other);
    progress("no plan fits memory without recomputation; searching again "
             "with it");
    recompute = true;
    first = searchRound(graph, spec, options, {}, limits, recompute, clock,
                        memoryFallback ? &atSpeed : nullptr);
  }
  if (!first && memoryFallback) {
    if (llvm::Error other = unlessInfeasible(first.takeError()))
      return std::move(other);
    progress("no plan fits memory at ratios proportional to speed; choosing "
             "ratios under memory");
    auto ratios = memoryRatios(graph, spec, options, recompute, atSpeed.get());
    if (!ratios)
      return ratios.takeError();
    clock.lap("ratios under memory");
    SearchLimits rest = limits;
    if (timeBudget > 0)
      rest.timeLimitSeconds =
          std::max(timeBudget - secondsSince(start), 0.05 * timeBudget);
    first = searchRound(graph, spec, options, *ratios, rest, recompute, clock);
  }
  return first;
}

void Synthesizer::stopAlternation(unsigned round, llvm::StringRef stage,
                                  llvm::Error err) {
  std::string why = llvm::toString(std::move(err));
  stats.alternationStop = (stage + ": " + why).str();
  progress(llvm::formatv("alternation stopped in round {0} at the {1}: {2}; "
                         "keeping the best plan found",
                         round + 1, stage, why));
}

bool Synthesizer::alternate(unsigned round) {
  constexpr unsigned kMaxRounds = 4;
  auto assigned = ratio::assignRatios(*current, spec, options.eval);
  if (!assigned) {
    stopAlternation(round, "ratio LP", assigned.takeError());
    return false;
  }
  clock.lap("ratio LP");
  dump("assign-ratios", *current);
  auto selected = ratio::selectCollectives(*current, spec, options.eval);
  if (!selected) {
    stopAlternation(round, "collective choice", selected.takeError());
    return false;
  }
  dump("select-collectives", *current);
  ++stats.alternations;
  auto estimate = evaluatePlan(*current, spec, options.eval);
  if (!estimate) {
    stopAlternation(round, "evaluation", estimate.takeError());
    return false;
  }
  clock.lap("collective choice and scoring");
  double cost = estimate->stepSeconds;
  if (cost < bestCost) {
    bestCost = cost;
    bestPlan = current->clone();
  }
  if (!(cost < lastCost) && round > 0)
    return false;
  lastCost = std::min(lastCost, cost);
  std::vector<double> ratios = searchRatiosOf(*current, spec);
  if (!assigned->changed || ratios.empty() || round + 1 == kMaxRounds)
    return false;
  // The search prices at one ratio per class: when the LP moved none of
  // them by minRatioMove or more from the ratios the last search ran at,
  // another search would see nearly the same prices (a heuristic).
  double moved = 0;
  for (auto [now, was] : llvm::zip(ratios, searchedAt))
    moved = std::max(moved, relativeMove(now, was));
  if (ratios.size() == searchedAt.size() && moved < options.minRatioMove) {
    progress(llvm::formatv("synthesis: alternation stops: the ratio LP moved "
                           "no class ratio by {0:P} or more (at most {1:P})",
                           options.minRatioMove, moved));
    return false;
  }
  SearchLimits next = limits;
  if (timeBudget > 0) {
    next.timeLimitSeconds = timeBudget - secondsSince(start);
    if (next.timeLimitSeconds <= 0)
      return false;
  }
  auto again =
      searchRound(graph, spec, options, ratios, next, recompute, clock);
  if (!again) {
    stopAlternation(round, "search at the LP's ratios", again.takeError());
    return false;
  }
  stats.expansions += again->found.expansions;
  searchedAt = again->space->ratios;
  dump("search", *again->plan);
  if (again->evaluated < bestCost) {
    bestCost = again->evaluated;
    bestPlan = again->plan->clone();
    best.space = std::move(again->space);
    best.found = std::move(again->found);
  }
  current = std::move(again->plan);
  lastCost = std::min(lastCost, again->evaluated);
  return round + 1 < kMaxRounds;
}

llvm::Expected<SynthResult> Synthesizer::finish() {
  SynthResult result;
  // Integer sizes (Z3) for the final plan's ratios, checked.
  if (!options.fixedRatios || options.align > 1) {
    ratio::IntegerizeOptions io;
    io.align = options.align;
    auto sizes = ratio::integerizePlan(*bestPlan, spec, options.eval, io);
    if (!sizes) {
      // No sizes that fit memory is the user's exit 2 (gradient
      // accumulation may then fit); anything else is ours.
      llvm::Error err = sizes.takeError();
      if (isMemoryShortfall(err))
        return std::move(err);
      return makeError(ExitInternal,
                       "synthesis: integer shard sizes failed: {0}",
                       llvm::toString(std::move(err)));
    }
    result.continuousStepSeconds = sizes->continuousCost;
    result.integerStepSeconds = sizes->integerCost;
    clock.lap("integer sizes (Z3)");
    dump("integerize", *bestPlan);
  }
  if (mlir::failed(mlir::verify(*bestPlan)))
    return makeError(ExitInternal, "synthesis: the plan does not verify");
  auto estimate = evaluatePlan(*bestPlan, spec, options.eval);
  if (!estimate)
    return estimate.takeError();
  SearchSpace &space = *best.space;
  // The search's cost is per micro-batch (SearchSpace::microBatches).
  result.searchStepSeconds = best.found.cost * double(space.microBatches());
  result.evaluatedStepSeconds = estimate->stepSeconds;
  stats.wallSeconds = secondsSince(start);
  stats.gap = best.found.gap;
  stats.capped = best.found.capped;
  result.stats = stats;
  result.explain = explainOf(space, best.found.choices);
  result.plan = std::move(bestPlan);
  return result;
}

llvm::Expected<SynthResult> Synthesizer::run() {
  timeBudget = options.timeLimitSeconds;
  auto first = firstRound();
  if (!first)
    return first.takeError();
  stats.expansions = first->found.expansions;
  dump("search", *first->plan);
  best = std::move(*first);
  bestPlan = std::move(best.plan);
  bestCost = lastCost = best.evaluated;
  // Alternation (docs/Design.md §4): LP for the found program,
  // per-collective choice, search again at the LP's ratios, while the cost
  // strictly improves.
  current = bestPlan->clone();
  searchedAt = best.space->ratios;
  for (unsigned round = 0; !options.fixedRatios && alternate(round); ++round)
    ;
  return finish();
}

std::string weft::stageDumpName(unsigned stage, llvm::StringRef name) {
  return (stage < 10 ? "0" : "") + std::to_string(stage) + "-" + name.str();
}

llvm::Expected<SynthResult> weft::synthesize(mlir::ModuleOp graph,
                                             const ClusterSpec &spec,
                                             const SynthOptions &options) {
  return Synthesizer(graph, spec, options).run();
}
