//===- SynthRatios.cpp - Per-class search ratios, ratios under memory -----===//
//
// docs/Synthesis.md "Ratios under memory".
//
//===----------------------------------------------------------------------===//

#include "SynthRatios.h"
#include "weft/Eval/RatioFromPlan.h"
#include "weft/Ratio/SolveRatios.h"
#include "weft/Support/Error.h"
#include "weft/Synth/Synthesize.h"

using namespace weft;
using namespace weft::synth;

std::vector<double> weft::synth::classRatiosOf(const ratio::Ratios &rows,
                                               const ClusterSpec &spec,
                                               llvm::ArrayRef<double> weights) {
  assert((weights.empty() || weights.size() == rows.size()) &&
         "one weight per segment");
  double weightSum = 0;
  for (unsigned s = 0; s < rows.size(); ++s)
    weightSum += weights.empty() ? 1 : weights[s];
  if (!(weightSum > 0))
    return {};
  std::vector<double> mean(spec.classes.size(), 0);
  for (auto [s, row] : llvm::enumerate(rows))
    for (unsigned c = 0; c < row.size() && c < mean.size(); ++c)
      mean[c] += row[c] * (weights.empty() ? 1 : weights[s]) / weightSum;
  std::vector<double> devices(spec.classes.size(), 0);
  for (const Node &n : spec.nodes)
    devices[spec.classOf(n.firstDevice).id] += n.numDevices;
  double total = 0;
  for (unsigned c = 0; c < mean.size(); ++c)
    total += mean[c] * devices[c];
  if (!(total > 0))
    return {};
  for (double &r : mean)
    r /= total;
  return mean;
}

std::optional<std::pair<SearchOutcome, double>>
weft::synth::nearestSeed(SearchSpace &space) {
  std::optional<std::pair<SearchOutcome, double>> nearest;
  for (SearchOutcome &seed : seedPlans(space, /*memoryPruning=*/false)) {
    double over = 0;
    for (unsigned r = 0; r < space.numReps(); ++r)
      over = std::max(over, seed.peakMemory[r] / space.capacity()[r]);
    if (!nearest || over < nearest->second)
      nearest.emplace(std::move(seed), over);
  }
  return nearest;
}

llvm::Expected<std::vector<double>>
weft::synth::memoryRatios(mlir::ModuleOp graph, const ClusterSpec &spec,
                          const SynthOptions &options, bool recompute,
                          SearchSpace *atSpeed) {
  std::unique_ptr<SearchSpace> built;
  if (!atSpeed) {
    auto space = SearchSpace::build(graph, spec, options.eval, {}, recompute);
    if (!space)
      return space.takeError();
    built = std::move(*space);
    atSpeed = built.get();
  }
  auto nearest = nearestSeed(*atSpeed);
  if (!nearest)
    return makeError(ExitInfeasible,
                     "no plan exists for this program on this mesh");
  auto plan = buildPlanOf(*atSpeed, graph, nearest->first.choices);
  if (!plan)
    return plan.takeError();
  auto problem = ratio::ratioProblemFromPlan(**plan, spec, options.eval);
  if (!problem)
    return problem.takeError();
  // The segments weighted by the bytes they shard: the search has one ratio
  // per class, and memory moves with the segments that hold the bytes.
  std::vector<double> bytes(problem->segments.size(), 0);
  for (const ratio::LinearCost &row : problem->memory)
    for (const ratio::RatioTerm &t : row.terms)
      bytes[t.segment] += std::abs(t.coef);
  constexpr unsigned kMaxCorrections = 3;
  std::vector<double> ratios;
  for (unsigned round = 0; round <= kMaxCorrections; ++round) {
    auto solution = ratio::solveRatios(*problem);
    // After a correction the capacities are the lowered ones: keep the last
    // ratios rather than report a shortfall against them.
    if (!solution && round > 0) {
      llvm::consumeError(solution.takeError());
      break;
    }
    if (!solution)
      return std::move(solution.takeError());
    ratios = classRatiosOf(solution->ratios, spec, bytes);
    if (ratios.empty())
      return memoryError(0, "no plan fits in memory, and the plan nearest to "
                            "fitting has no sharding ratios to move");
    if (round == kMaxCorrections)
      break;
    auto there =
        SearchSpace::build(graph, spec, options.eval, ratios, recompute);
    if (!there)
      return there.takeError();
    SearchSpace &space = **there;
    auto check = nearestSeed(space);
    if (!check || check->second <= 1)
      break;
    for (unsigned r = 0; r < space.numReps(); ++r) {
      double over = check->first.peakMemory[r] / space.capacity()[r];
      int64_t c = space.mesh.getClassIndexOfNode(space.repDevices[r] /
                                                 space.axisSizes[1]);
      if (over > 1 && c >= 0 && size_t(c) < problem->classes.size())
        problem->classes[c].memoryCapacity /= over;
    }
  }
  return ratios;
}
