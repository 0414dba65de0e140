//===- Integerize.cpp - Integer shard sizes with Z3 -----------------------===//
//
// The model of docs/Ratios.md §Integerize: per (segment, class) a base size q
// and a count r of devices holding one unit more; the LP's rows with the
// ratios replaced by sizes / extent; z3::optimize minimises the same
// objective, bounded above by the largest-remainder rounding (the incumbent).
// Z3 throws; every z3::exception is caught here and becomes an llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/Integerize.h"
#include "CostKey.h"
#include "Z3Numbers.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/StepCollapse.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringMap.h"
#include <cmath>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Builds the integer model's constraints into vectors, so that the same
/// model serves z3::optimize and the infeasibility explanation.
class IntegerModel {
public:
  IntegerModel(const RatioProblem &p, const IntegerizeOptions &options,
               z3::context &ctx)
      : p(p), options(options), ctx(ctx), structure(ctx), timeRows(ctx),
        objective(ctx.real_val(0)) {}

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

private:
  void addShareVariables();
  z3::expr share(const RatioTerm &t, z3::expr coef);
  z3::expr time(double seconds) {
    return ctx.real_val(exactRational(std::round(seconds / quantum)).c_str());
  }
  z3::expr linearTime(const LinearCost &cost, double scale);
  z3::expr maxTime(const MaxCost &cost);
  void addStep(unsigned distinct, const Step &step, double multiplicity);
  void chooseQuantum();

  const RatioProblem &p;
  const IntegerizeOptions &options;
  z3::context &ctx;
  /// [segment][class]: base units, devices with one unit more, and the
  /// largest and smallest device's units.
  std::vector<std::vector<z3::expr>> base, larger, high, low;
  std::vector<int64_t> units;
  llvm::StringMap<unsigned> maxColumns;
  std::vector<z3::expr> epigraphs;
};
} // namespace

void IntegerModel::chooseQuantum() {
  // Times become integers in units of a power of two 2^-40 below the largest
  // magnitude: Z3's exact arithmetic stays on short numbers.
  double largest = 0;
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
        for (const Node &node : p.nodes)
          largest = std::max(largest, load.bytes / node.nicBandwidth *
                                          (p.numDevices() + 1));
    }
  if (largest > 0)
    quantum = std::ldexp(1.0, std::ilogb(largest) - 40);
}

void IntegerModel::addShareVariables() {
  unsigned numClasses = p.classes.size();
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    const Segment &seg = p.segments[s];
    int64_t unit = alignmentUnit(seg, options);
    int64_t total = seg.extent / unit;
    units.push_back(total);
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
      structure.push_back(q >= 0 && q <= ctx.int_val(total));
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
      high.back().push_back(q +
                            z3::ite(r >= 1, ctx.int_val(1), ctx.int_val(0)));
      low.back().push_back(q);
    }
    structure.push_back(sum == ctx.int_val(total));
  }
}

/// coef·B for a term, B read at the largest share when coef ≥ 0 and at the
/// smallest otherwise (as evaluateSteps does): B = device units / total units.
z3::expr IntegerModel::share(const RatioTerm &t, z3::expr coef) {
  const auto &units_ = t.coef >= 0 ? high : low;
  z3::expr perUnit =
      (coef / ctx.real_val(std::to_string(units[t.segment]).c_str()))
          .simplify();
  return perUnit * z3::to_real(units_[t.segment][t.deviceClass]);
}

z3::expr IntegerModel::linearTime(const LinearCost &cost, double scale) {
  z3::expr sum = time(scale * cost.constant);
  for (const RatioTerm &t : cost.terms)
    sum = sum + share(t, time(scale * t.coef));
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
    for (const LinearCost &piece : cost.pieces)
      timeRows.push_back(e >= linearTime(piece, cost.scale));
  }
  return epigraphs[it->second];
}

void IntegerModel::addStep(unsigned distinct, const Step &step,
                           double multiplicity) {
  std::string suffix = "_" + std::to_string(distinct);
  z3::expr computeTime = ctx.real_const(("C" + suffix).c_str());
  z3::expr commTime = ctx.real_const(("M" + suffix).c_str());
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    const StepClassCost &cost = step.perClass[c];
    z3::expr compute = linearTime(cost.compute, 1);
    for (const MaxCost &m : cost.computeMax)
      compute = compute + maxTime(m);
    timeRows.push_back(computeTime >= compute);

    z3::expr comm = linearTime(cost.comm, 1);
    for (const MaxCost &m : cost.commMax)
      comm = comm + maxTime(m);
    if (cost.nicLoads.empty()) {
      timeRows.push_back(commTime >= comm);
      continue;
    }
    for (unsigned n : p.nodesOfClass(c)) {
      const Node &node = p.nodes[n];
      z3::expr row = comm;
      for (const NicLoad &load : cost.nicLoads) {
        double perShare = load.bytes / node.nicBandwidth;
        row = row + time(perShare);
        for (const auto &[cls, devices] : node.devices)
          row =
              row + share({load.segment, cls, -1.0}, time(-perShare * devices));
      }
      timeRows.push_back(commTime >= row);
    }
  }
  objective =
      objective + exactReal(ctx, multiplicity) * (computeTime + commTime);
}

void IntegerModel::build() {
  chooseQuantum();
  addShareVariables();
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
      bytes = bytes + share(t, exactReal(ctx, t.coef));
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
      return makeError(ExitInfeasible,
                       "no integer shard sizes fit in memory: device class "
                       "'{0}' ({1} devices) lacks memory",
                       p.classes[c].name, p.classes[c].count);
  }
  return makeError(ExitInfeasible,
                   "no integer shard sizes fit in memory on all classes "
                   "together");
}

llvm::Expected<IntegerPlan>
weft::ratio::integerize(const RatioProblem &problem,
                        const RatioSolution &solution,
                        const IntegerizeOptions &options) {
  if (llvm::Error err = problem.check())
    return std::move(err);
  if (options.align < 1)
    return badInput("--align {0}, expected a positive number of elements",
                    options.align);
  if (solution.ratios.size() != problem.segments.size())
    return badInput("solution has ratios for {0} segments, expected {1}",
                    solution.ratios.size(), problem.segments.size());

  IntegerPlan rounded =
      roundLargestRemainder(problem, solution.ratios, options);
  bool roundedFits = fitsMemory(problem, rounded);
  double roundedCost = roundedFits ? planCost(problem, rounded) : INFINITY;
  try {
    z3::context ctx;
    IntegerModel model(problem, options, ctx);
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
    // The incumbent bounds the search (a little slack for the quantum).
    if (roundedFits)
      opt.add(
          model.objective <=
          exactReal(ctx, std::ceil(roundedCost / model.quantum * (1 + 1e-9)) +
                             problem.steps.size() + 1));
    opt.minimize(model.objective);
    z3::check_result result = opt.check();

    IntegerPlan plan;
    if (result == z3::sat) {
      plan = model.read(opt.get_model());
      plan.provedOptimal = true;
    } else if (roundedFits) {
      // Resource limit, or the bound was too tight: keep the incumbent.
      plan = rounded;
    } else if (result == z3::unsat) {
      return explainNoSizes(problem, model, ctx);
    } else {
      return makeError(ExitInfeasible,
                       "integer shard sizes: Z3 reached its resource limit "
                       "({0}) with no plan that fits in memory",
                       options.resourceLimit);
    }
    // Never worse than the incumbent (the quantum can hide a tie-break).
    if (roundedFits && planCost(problem, rounded) < planCost(problem, plan)) {
      bool proved = plan.provedOptimal;
      plan = rounded;
      plan.provedOptimal = proved;
    }
    plan.continuousCost = evaluateObjective(problem, solution.ratios);
    plan.integerCost = planCost(problem, plan);
    plan.roundedCost = roundedCost;
    if (llvm::Error err = checkIntegerPlan(problem, plan, options))
      return makeError(ExitInternal, "integerize produced an invalid plan: {0}",
                       llvm::toString(std::move(err)));
    return plan;
  } catch (const z3::exception &e) {
    return makeError(ExitInternal, "Z3 failed on the integer sizes: {0}",
                     e.msg());
  }
}
