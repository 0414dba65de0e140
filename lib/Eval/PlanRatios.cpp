//===- PlanRatios.cpp - Ratio LP, collective choice, integer sizes --------===//

#include "weft/Eval/PlanRatios.h"
#include "PlanSegments.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/Builders.h"
#include "weft/Ratio/Objective.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::ratio;

/// Every ratio within 1e-12 of the other's.
static bool sameRatios(const Ratios &a, const Ratios &b) {
  if (a.size() != b.size())
    return false;
  for (unsigned s = 0; s < a.size(); ++s) {
    if (a[s].size() != b[s].size())
      return false;
    for (unsigned c = 0; c < a[s].size(); ++c)
      if (std::abs(a[s][c] - b[s][c]) > 1e-12)
        return false;
  }
  return true;
}

namespace {
/// The ratio problem of a plan and the plan's current ratios.
struct ProblemAt {
  RatioProblem problem;
  Ratios at;
};
} // namespace

static llvm::Expected<ProblemAt> problemAt(mlir::ModuleOp plan,
                                           const ClusterSpec &spec,
                                           const EvalOptions &options) {
  auto problem = ratioProblemFromPlan(plan, spec, options);
  if (!problem)
    return problem.takeError();
  auto at = planRatios(plan);
  if (!at)
    return at.takeError();
  return ProblemAt{std::move(*problem), std::move(*at)};
}

llvm::Expected<AssignResult>
weft::ratio::assignRatios(mlir::ModuleOp plan, const ClusterSpec &spec,
                          const EvalOptions &options,
                          const AssignOptions &assign) {
  auto state = problemAt(plan, spec, options);
  if (!state)
    return state.takeError();
  RatioProblem *problem = &state->problem;
  Ratios *at = &state->at;
  AssignResult result;
  result.beforeSeconds = result.afterSeconds = evaluateObjective(*problem, *at);
  // Reported in seconds per step (the objective is per micro-batch).
  double scale = problem->objectiveScale;
  auto inSeconds = [&]() -> AssignResult {
    result.beforeSeconds *= scale;
    result.afterSeconds *= scale;
    return result;
  };
  if (problem->segments.empty())
    return inSeconds();
  Ratios best = *at;
  double radius = assign.radius;
  unsigned rounds = problem->linearized ? assign.maxRounds : 1;
  for (unsigned round = 0; round < rounds; ++round) {
    LpOptions lp = assign.lp;
    if (problem->linearized)
      lp.trustRegion = TrustRegion{best, radius};
    auto solution = solveRatios(*problem, lp);
    if (!solution)
      return solution.takeError();
    ++result.rounds;
    result.rows = solution->numRows;
    result.columns = solution->numColumns;
    // The LP's optimum is the trust region's centre: a smaller region
    // (which still holds the centre) has the same optimum, so stop.
    if (round > 0 && sameRatios(solution->ratios, best))
      break;
    // The linearised model promises too little (it is exact at the
    // region's centre, and smaller regions promise less): stop.
    if (problem->linearized &&
        solution->objectiveSeconds >
            result.afterSeconds * (1 - assign.minPredictedGain))
      break;
    // The true objective at the candidate: exact when nothing is
    // linearised, else re-priced at the candidate's own plan.
    double value = evaluateObjective(*problem, solution->ratios);
    std::optional<RatioProblem> there;
    if (problem->linearized) {
      mlir::OwningOpRef<mlir::ModuleOp> moved(plan.clone());
      if (auto err = applyRatios(*moved, solution->ratios))
        return std::move(err);
      auto p = ratioProblemFromPlan(*moved, spec, options);
      if (!p)
        return p.takeError();
      value = evaluateObjective(*p, solution->ratios);
      there = std::move(*p);
    }
    // Strict improvement only (idempotence; ties keep the plan's ratios).
    if (value < result.afterSeconds * (1 - 1e-12)) {
      best = solution->ratios;
      result.afterSeconds = value;
      result.changed = true;
      if (there)
        *problem = std::move(*there);
    } else {
      radius /= 2;
    }
  }
  if (result.changed)
    if (auto err = applyRatios(plan, best))
      return std::move(err);
  return inSeconds();
}

llvm::Expected<SelectResult>
weft::ratio::selectCollectives(mlir::ModuleOp plan, const ClusterSpec &spec,
                               const EvalOptions &options) {
  // The collectives the evaluator records, in program order.
  llvm::SmallVector<mlir::Operation *> relayouts;
  auto *func = planFunction(plan);
  if (!func)
    return badInput("the plan has no function to evaluate");
  for (mlir::Operation &op : func->getRegion(0).front())
    if (op.getDialect() &&
        op.getDialect()->getNamespace() ==
            spmd::SpmdDialect::getDialectNamespace() &&
        !llvm::isa<spmd::ParameterOp, spmd::LocalOp, spmd::SendOp,
                   spmd::RecvOp>(op))
      relayouts.push_back(&op);
  // Price every collective once with each variant: three evaluations
  // (variant k: all_reduce kAlgorithms[k]; all_gather padded, grouped,
  // padded).
  static constexpr spmd::AllReduceAlgorithm kAlgorithms[] = {
      spmd::AllReduceAlgorithm::Ring, spmd::AllReduceAlgorithm::Hierarchical,
      spmd::AllReduceAlgorithm::Tree};
  auto priceWith =
      [&](unsigned k) -> llvm::Expected<std::vector<CollectiveEstimate>> {
    mlir::OwningOpRef<mlir::ModuleOp> copy(plan.clone());
    auto *f = planFunction(*copy);
    for (mlir::Operation &op : f->getRegion(0).front()) {
      if (auto gather = llvm::dyn_cast<spmd::AllGatherOp>(op))
        gather.setMode(k == 1 ? spmd::GatherMode::Grouped
                              : spmd::GatherMode::Padded);
      if (auto reduce = llvm::dyn_cast<spmd::AllReduceOp>(op))
        reduce.setAlgorithm(kAlgorithms[k]);
    }
    auto estimate = evaluatePlan(*copy, spec, options);
    if (!estimate)
      return estimate.takeError();
    return std::move(estimate->collectives);
  };
  std::vector<std::vector<CollectiveEstimate>> priced;
  for (unsigned k = 0; k < 3; ++k) {
    auto estimates = priceWith(k);
    if (!estimates)
      return estimates.takeError();
    if (estimates->size() != relayouts.size())
      return makeError(
          ExitInternal,
          "the evaluator recorded {0} collectives, the plan has {1}",
          estimates->size(), relayouts.size());
    priced.push_back(std::move(*estimates));
  }
  SelectResult result;
  for (auto [i, op] : llvm::enumerate(relayouts)) {
    auto gather = llvm::dyn_cast<spmd::AllGatherOp>(op);
    auto reduce = llvm::dyn_cast<spmd::AllReduceOp>(op);
    if (!gather && !reduce)
      continue;
    ++result.considered;
    auto timeOf = [&](unsigned k) {
      return priced[k][i].forwardSeconds + priced[k][i].dualSeconds;
    };
    // The current variant, kept unless another is strictly faster.
    unsigned now = 0, count = gather ? 2 : 3;
    if (gather)
      now = gather.getMode() == spmd::GatherMode::Grouped ? 1 : 0;
    else
      now = unsigned(llvm::find(kAlgorithms, reduce.getAlgorithm()) -
                     std::begin(kAlgorithms));
    unsigned pick = now;
    for (unsigned k = 0; k < count; ++k)
      if (timeOf(k) < timeOf(pick) * (1 - 1e-12))
        pick = k;
    if (pick == now)
      continue;
    if (gather)
      gather.setMode(pick == 1 ? spmd::GatherMode::Grouped
                               : spmd::GatherMode::Padded);
    else
      reduce.setAlgorithm(kAlgorithms[pick]);
    ++result.changed;
  }
  return result;
}

llvm::Expected<IntegerPlan>
weft::ratio::integerizePlan(mlir::ModuleOp plan, const ClusterSpec &spec,
                            const EvalOptions &options,
                            const IntegerizeOptions &integerizeOptions) {
  auto state = problemAt(plan, spec, options);
  if (!state)
    return state.takeError();
  RatioProblem *problem = &state->problem;
  Ratios *at = &state->at;
  RatioSolution solution;
  solution.ratios = *at;
  solution.objectiveSeconds = evaluateObjective(*problem, *at);
  auto sizes = integerize(*problem, solution, integerizeOptions);
  if (!sizes)
    return sizes.takeError();
  if (auto err = checkIntegerPlan(*problem, *sizes, integerizeOptions))
    return std::move(err);
  if (auto err = applyRatios(plan, *at, &*sizes))
    return std::move(err);
  return std::move(*sizes);
}
