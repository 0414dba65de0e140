//===- Integerize.cpp - Integer shard sizes with Z3 -----------------------===//
//
// The model of docs/Ratios.md §Integerize: per (segment, class) a base size q
// and a count r of devices holding one unit more; the LP's rows with the
// ratios replaced by sizes / extent; z3::optimize minimises the same
// objective, bounded above by the largest-remainder rounding (the incumbent),
// separately on each independent component of segments.
// Z3 throws; every z3::exception is caught here and becomes an llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/Integerize.h"
#include "Components.h"
#include "LocalSearch.h"
#include "Z3Numbers.h"
#include "weft/Ratio/CostKey.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/StepCollapse.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringMap.h"
#include <cmath>
#include <limits>
#include <utility>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Builds the integer model's constraints into vectors, so that the same
/// model serves z3::optimize and the infeasibility explanation.
class IntegerModel {
public:
  /// `window`: base sizes within this many units of the LP's per-device
  /// target (0: anywhere).
  IntegerModel(const RatioProblem &p, const Ratios &ratios,
               const IntegerizeOptions &options, int64_t window,
               z3::context &ctx)
      : p(p), ratios(ratios), options(options), window(window), ctx(ctx),
        structure(ctx), timeRows(ctx), objective(ctx.real_val(0)) {}

  void build();
  /// Sizes of the model's solution.
  IntegerPlan read(const z3::model &model) const;

  /// Sums, domains and fixed-ratio windows.
  z3::expr_vector structure;
  /// One per class with a memory row (empty entries otherwise).
  std::vector<std::optional<z3::expr>> memoryRows;
  /// Epigraph rows of the time variables.
  z3::expr_vector timeRows;
  /// Σ mult·(C + M), in units of `quantum` seconds.
  z3::expr objective;
  double quantum = 1;
  /// How far the quantised objective may sit from the true one at any
  /// sizes in the model, in quanta: every rounded constant is off by at
  /// most ½, every rounded per-unit coefficient by ½ per unit the device
  /// may hold.
  double objectiveError = 0;

private:
  void addShareVariables();
  /// coef·B for the term; `seconds`: coef is a time, quantised per unit.
  z3::expr share(const RatioTerm &t, double coef, bool seconds);
  z3::expr time(double seconds) {
    pending += 0.5;
    return ctx.real_val(exactRational(std::round(seconds / quantum)).c_str());
  }
  /// The rounding error of the time expressions built since the last call.
  double takePending() { return std::exchange(pending, 0.0); }
  z3::expr linearTime(const LinearCost &cost, double scale);
  z3::expr maxTime(const MaxCost &cost);
  void addStep(unsigned distinct, const Step &step, double multiplicity);
  void chooseQuantum();

  const RatioProblem &p;
  const Ratios &ratios;
  const IntegerizeOptions &options;
  int64_t window;
  z3::context &ctx;
  /// [segment][class]: base units, devices with one unit more, and the
  /// largest and smallest device's units.
  std::vector<std::vector<z3::expr>> base, larger, high, low;
  std::vector<int64_t> units;
  /// [segment][class]: the most units a device may hold.
  std::vector<std::vector<int64_t>> mostUnits;
  double pending = 0;
  /// Per epigraph, the largest rounding error of its pieces.
  std::vector<double> epigraphErrors;
  /// Per class, one node of each shape (RatioProblem::distinctNodesByClass).
  std::vector<llvm::SmallVector<unsigned, 2>> nodeShapes;
  llvm::StringMap<unsigned> maxColumns;
  std::vector<z3::expr> epigraphs;
};
} // namespace

void IntegerModel::chooseQuantum() {
  // Times become integers in units of a power of two 2^-40 below the largest
  // magnitude: Z3's exact arithmetic stays on short numbers.
  double largest = 0;
  // bytes / NIC bandwidth is largest at the slowest NIC.
  double slowestNic = std::numeric_limits<double>::infinity();
  for (const Node &node : p.nodes)
    slowestNic = std::min(slowestNic, node.nicBandwidth);
  double devicesAndOne = p.numDevices() + 1;
  auto see = [&](const LinearCost &cost, double scale) {
    largest = std::max(largest, std::abs(scale * cost.constant));
    for (const RatioTerm &t : cost.terms)
      largest = std::max(largest, std::abs(scale * t.coef));
  };
  for (const Step &step : p.steps)
    for (const StepClassCost &cost : step.perClass) {
      see(cost.compute, 1);
      see(cost.comm, 1);
      for (const auto *list : {&cost.computeMax, &cost.commMax})
        for (const MaxCost &m : *list)
          for (const LinearCost &piece : m.pieces)
            see(piece, m.scale);
      for (const NicLoad &load : cost.nicLoads)
        if (!p.nodes.empty())
          largest = std::max(largest, load.bytes / slowestNic * devicesAndOne);
    }
  if (largest > 0)
    quantum = std::ldexp(1.0, std::ilogb(largest) - 20);
}

void IntegerModel::addShareVariables() {
  unsigned numClasses = p.classes.size();
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    const Segment &seg = p.segments[s];
    int64_t unit = alignmentUnit(seg, options);
    int64_t total = seg.extent / unit;
    units.push_back(total);
    mostUnits.emplace_back();
    base.emplace_back();
    larger.emplace_back();
    high.emplace_back();
    low.emplace_back();
    z3::expr sum = ctx.int_val(0);
    for (unsigned c = 0; c < numClasses; ++c) {
      std::string suffix = "_" + std::to_string(s) + "_" + std::to_string(c);
      int64_t count = p.classes[c].count;
      z3::expr q = ctx.int_const(("q" + suffix).c_str());
      z3::expr r = ctx.int_const(("r" + suffix).c_str());
      int64_t lo = 0, hi = total;
      if (window > 0) {
        double target = ratios[s][c] * total;
        lo = std::max<int64_t>(lo, int64_t(std::floor(target)) - window);
        hi = std::min<int64_t>(hi, int64_t(std::ceil(target)) + window);
      }
      structure.push_back(q >= ctx.int_val(lo) && q <= ctx.int_val(hi));
      structure.push_back(r >= 0 && r <= ctx.int_val(count - 1));
      z3::expr classUnits = ctx.int_val(count) * q + r;
      sum = sum + classUnits;
      if (seg.fixedRatios) {
        double target = (*seg.fixedRatios)[c] * count * total;
        structure.push_back(
            classUnits >= ctx.int_val(int64_t(std::floor(target + 1e-9))) &&
            classUnits <= ctx.int_val(int64_t(std::ceil(target - 1e-9))));
      }
      base.back().push_back(q);
      larger.back().push_back(r);
      // b = 1 exactly when some device holds one unit more (r ≥ 1).
      z3::expr b = ctx.int_const(("b" + suffix).c_str());
      structure.push_back(b >= 0 && b <= 1 && r >= b &&
                          r <=
                              ctx.int_val(std::max<int64_t>(count - 1, 0)) * b);
      high.back().push_back(q + b);
      mostUnits.back().push_back(hi + 1);
      low.back().push_back(q);
    }
    structure.push_back(sum == ctx.int_val(total));
  }
}

/// coef·B for a term, B read at the largest share when coef ≥ 0 and at the
/// smallest otherwise (as evaluateSteps does): B = device units / total units.
/// The coefficient per unit is rounded to the quantum (times) or taken as
/// the double it is (bytes), so that the rows carry short numbers: dividing
/// by each segment's unit count (1,024, 50,257, ...) gave denominators whose
/// products made Z3's exact simplex crawl (docs/Ratios.md §Integerize).
z3::expr IntegerModel::share(const RatioTerm &t, double coef, bool seconds) {
  const auto &units_ = coef >= 0 ? high : low;
  double perUnit = coef / double(units[t.segment]);
  if (seconds)
    pending += 0.5 * double(mostUnits[t.segment][t.deviceClass]) - 0.5;
  z3::expr c = seconds ? time(perUnit) : exactReal(ctx, perUnit);
  return c * z3::to_real(units_[t.segment][t.deviceClass]);
}

z3::expr IntegerModel::linearTime(const LinearCost &cost, double scale) {
  z3::expr sum = time(scale * cost.constant);
  for (const RatioTerm &t : cost.terms)
    sum = sum + share(t, scale * t.coef, /*seconds=*/true);
  return sum;
}

z3::expr IntegerModel::maxTime(const MaxCost &cost) {
  // scale folded into the pieces; shared by equal (scale, pieces).
  std::string key = piecesKey(cost) + "@" + exactRational(cost.scale);
  auto [it, inserted] = maxColumns.try_emplace(key, epigraphs.size());
  if (inserted) {
    z3::expr e =
        ctx.real_const(("e_" + std::to_string(epigraphs.size())).c_str());
    epigraphs.push_back(e);
    double outer = takePending(), worst = 0;
    for (const LinearCost &piece : cost.pieces) {
      timeRows.push_back(e >= linearTime(piece, cost.scale));
      worst = std::max(worst, takePending());
    }
    epigraphErrors.push_back(worst);
    pending = outer;
  }
  pending += epigraphErrors[it->second];
  return epigraphs[it->second];
}

void IntegerModel::addStep(unsigned distinct, const Step &step,
                           double multiplicity) {
  std::string suffix = "_" + std::to_string(distinct);
  z3::expr computeTime = ctx.real_const(("C" + suffix).c_str());
  z3::expr commTime = ctx.real_const(("M" + suffix).c_str());
  double computeError = 0, commError = 0;
  takePending();
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    const StepClassCost &cost = step.perClass[c];
    z3::expr compute = linearTime(cost.compute, 1);
    for (const MaxCost &m : cost.computeMax)
      compute = compute + maxTime(m);
    timeRows.push_back(computeTime >= compute);
    computeError = std::max(computeError, takePending());

    z3::expr comm = linearTime(cost.comm, 1);
    for (const MaxCost &m : cost.commMax)
      comm = comm + maxTime(m);
    double commBase = takePending();
    if (cost.nicLoads.empty()) {
      timeRows.push_back(commTime >= comm);
      commError = std::max(commError, commBase);
      continue;
    }
    // Nodes of one shape would add the same row.
    for (unsigned n : nodeShapes[c]) {
      const Node &node = p.nodes[n];
      z3::expr row = comm;
      for (const NicLoad &load : cost.nicLoads) {
        double perShare = load.bytes / node.nicBandwidth;
        row = row + time(perShare);
        for (const auto &[cls, devices] : node.devices)
          row = row + share({load.segment, cls, -1.0}, -perShare * devices,
                            /*seconds=*/true);
      }
      timeRows.push_back(commTime >= row);
      commError = std::max(commError, commBase + takePending());
    }
  }
  objectiveError += multiplicity * (computeError + commError);
  objective =
      objective + exactReal(ctx, multiplicity) * (computeTime + commTime);
}

void IntegerModel::build() {
  chooseQuantum();
  addShareVariables();
  nodeShapes = p.distinctNodesByClass();
  CollapsedSteps steps = collapseSteps(p);
  for (unsigned d = 0; d < steps.representative.size(); ++d)
    addStep(d, p.steps[steps.representative[d]], steps.multiplicity[d]);
  memoryRows.assign(p.classes.size(), std::nullopt);
  for (unsigned c = 0; c < p.memory.size(); ++c) {
    double capacity = p.classes[c].memoryCapacity;
    if (!std::isfinite(capacity))
      continue;
    const LinearCost &mem = p.memory[c];
    z3::expr bytes = exactReal(ctx, mem.constant);
    for (const RatioTerm &t : mem.terms)
      bytes = bytes + share(t, t.coef, /*seconds=*/false);
    memoryRows[c] = bytes <= exactReal(ctx, capacity);
  }
}

IntegerPlan IntegerModel::read(const z3::model &model) const {
  IntegerPlan plan;
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    int64_t unit = alignmentUnit(p.segments[s], options);
    plan.units.push_back(unit);
    plan.sizes.emplace_back();
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      int64_t q = model.eval(base[s][c], true).get_numeral_int64();
      int64_t r = model.eval(larger[s][c], true).get_numeral_int64();
      std::vector<int64_t> devices;
      for (int64_t i = 0; i < int64_t(p.classes[c].count); ++i)
        devices.push_back((q + (i < r)) * unit);
      plan.sizes.back().push_back(std::move(devices));
    }
  }
  return plan;
}

static bool fitsMemory(const RatioProblem &p, const IntegerPlan &plan) {
  auto [high, low] = planShares(p, plan);
  for (unsigned c = 0; c < p.memory.size(); ++c)
    if (evaluateMemory(p, c, high, low) > p.classes[c].memoryCapacity)
      return false;
  return true;
}

static double planCost(const RatioProblem &p, const IntegerPlan &plan) {
  auto [high, low] = planShares(p, plan);
  return evaluateSteps(p, high, low).total;
}

/// The class furthest over its capacity under `plan` (relative).
static std::string worstClass(const RatioProblem &p, const IntegerPlan &plan) {
  auto [high, low] = planShares(p, plan);
  std::string worst;
  double most = 0;
  for (unsigned c = 0; c < p.memory.size(); ++c) {
    double over = evaluateMemory(p, c, high, low) /
                  std::max(p.classes[c].memoryCapacity, 1.0);
    if (worst.empty() || over > most) {
      most = over;
      worst = p.classes[c].name;
    }
  }
  return worst;
}

/// Names the class whose memory row alone stands between the model and a
/// solution.
static llvm::Error explainNoSizes(const RatioProblem &p, IntegerModel &model,
                                  z3::context &ctx) {
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    if (!model.memoryRows[c])
      continue;
    z3::solver solver(ctx);
    solver.add(model.structure);
    for (unsigned other = 0; other < p.classes.size(); ++other)
      if (other != c && model.memoryRows[other])
        solver.add(*model.memoryRows[other]);
    if (solver.check() == z3::sat)
      return memoryError(0,
                         "no integer shard sizes fit in memory: device class "
                         "'{0}' ({1} devices) lacks memory",
                         p.classes[c].name, p.classes[c].count);
  }
  return memoryError(0, "no integer shard sizes fit in memory on all "
                        "classes together");
}

namespace {
/// Sizes of one component and whether Z3 proved them optimal.
struct ComponentSizes {
  std::vector<std::vector<std::vector<int64_t>>> sizes;
  bool proved = false;
};
} // namespace

/// Runs z3::optimize on one model; `std::nullopt` plan when unsat/unknown.
static llvm::Expected<std::optional<IntegerPlan>>
runOptimize(const RatioProblem &p, const Ratios &ratios,
            const IntegerizeOptions &options, int64_t window,
            double incumbentCost, bool &unsat) {
  z3::context ctx;
  IntegerModel model(p, ratios, options, window, ctx);
  model.build();
  z3::optimize opt(ctx);
  z3::params params(ctx);
  params.set("rlimit", options.resourceLimit);
  opt.set(params);
  opt.add(model.structure);
  opt.add(model.timeRows);
  for (const auto &row : model.memoryRows)
    if (row)
      opt.add(*row);
  // The incumbent bounds the search (slack for the quantum's rounding).
  if (std::isfinite(incumbentCost))
    opt.add(model.objective <=
            exactReal(
                ctx, std::ceil(incumbentCost / model.quantum * (1 + 1e-9)) +
                         std::ceil(model.objectiveError) + p.steps.size() + 1));
  opt.minimize(model.objective);
  z3::check_result result = opt.check();
  unsat = result == z3::unsat;
  if (result != z3::sat)
    return std::nullopt;
  IntegerPlan plan = model.read(opt.get_model());
  plan.provedOptimal = true;
  return plan;
}

/// Optimises one independent component: the rounding, improved by local
/// search, is the incumbent that bounds Z3's search.
static llvm::Expected<ComponentSizes>
optimizeComponent(const RatioProblem &p, const Ratios &ratios,
                  const IntegerizeOptions &options) {
  IntegerPlan rounded = roundLargestRemainder(p, ratios, options);
  bool roundedFits = fitsMemory(p, rounded);
  double roundedCost = INFINITY;
  if (roundedFits)
    roundedCost = improveLocally(p, rounded);
  bool unsat = false;
  auto found =
      runOptimize(p, ratios, options, options.window, roundedCost, unsat);
  if (!found)
    return found.takeError();
  // No sizes near the LP's (memory): search every size before giving up.
  if (!*found && unsat && options.window > 0 && !roundedFits) {
    found = runOptimize(p, ratios, options, 0, roundedCost, unsat);
    if (!found)
      return found.takeError();
  }
  ComponentSizes result;
  if (*found && (!roundedFits || planCost(p, **found) <= roundedCost)) {
    result.sizes = (*found)->sizes;
    result.proved = true;
    return result;
  }
  if (roundedFits) {
    // Resource limit, or the quantum hid a tie: keep the incumbent.
    result.sizes = rounded.sizes;
    result.proved = bool(*found);
    return result;
  }
  if (unsat) {
    z3::context ctx;
    IntegerModel model(p, ratios, options, 0, ctx);
    model.build();
    return explainNoSizes(p, model, ctx);
  }
  // Z3 gave up (resource limit) and the rounding does not fit: repair the
  // rounding against memory, then improve it.
  IntegerPlan repaired = rounded;
  if (repairMemory(p, repaired) == 0) {
    improveLocally(p, repaired);
    result.sizes = repaired.sizes;
    return result;
  }
  return memoryError(0,
                     "no integer shard sizes fit in memory: the rounding of "
                     "the ratios repaired against memory still needs more "
                     "than device class '{0}' holds (Z3 stopped at its "
                     "resource limit of {1})",
                     worstClass(p, repaired), options.resourceLimit);
}

llvm::Expected<IntegerPlan>
weft::ratio::integerize(const RatioProblem &problem,
                        const RatioSolution &solution,
                        const IntegerizeOptions &options) {
  if (llvm::Error err = problem.check())
    return std::move(err);
  if (options.align < 1 || options.window < 0)
    return badInput("--align {0} and window {1}, expected align >= 1 and "
                    "window >= 0",
                    options.align, options.window);
  if (solution.ratios.size() != problem.segments.size())
    return badInput("solution has ratios for {0} segments, expected {1}",
                    solution.ratios.size(), problem.segments.size());

  // Segments no step or memory row mentions keep the rounding.
  IntegerPlan plan = roundLargestRemainder(problem, solution.ratios, options);
  plan.roundedCost =
      fitsMemory(problem, plan) ? planCost(problem, plan) : INFINITY;
  plan.provedOptimal = true;
  try {
    for (const Component &comp : splitIndependent(problem)) {
      Ratios ratios;
      for (unsigned s : comp.segments)
        ratios.push_back(solution.ratios[s]);
      auto sizes = optimizeComponent(comp.problem, ratios, options);
      if (!sizes)
        return sizes.takeError();
      for (unsigned j = 0; j < comp.segments.size(); ++j)
        plan.sizes[comp.segments[j]] = sizes->sizes[j];
      plan.provedOptimal &= sizes->proved;
    }
  } catch (const z3::exception &e) {
    return makeError(ExitInternal, "Z3 failed on the integer sizes: {0}",
                     e.msg());
  }
  plan.continuousCost =
      problem.objectiveScale * evaluateObjective(problem, solution.ratios);
  plan.integerCost = problem.objectiveScale * planCost(problem, plan);
  plan.roundedCost *= problem.objectiveScale;
  if (llvm::Error err = checkIntegerPlan(problem, plan, options))
    return makeError(ExitInternal, "integerize produced an invalid plan: {0}",
                     llvm::toString(std::move(err)));
  return plan;
}
