//===- GavelThroughput.cpp - Gavel's maximum total throughput ------------===//
//
// OSDI'20 §4.2 (max sum throughput), with each job's throughput normalised
// by its rate on its fastest type so that jobs of different models add up:
//
//   maximise Σ_j Σ_t x_jt r_jt / r_j*
//   s.t. Σ_t x_jt <= 1 (each j);  Σ_j s_j x_jt <= C_t (each t);  x >= 0,
// over groups of identical jobs (groupIdenticalJobs).
//
//===----------------------------------------------------------------------===//

#include "LPPolicy.h"
#include "weft/Support/LinearProgram.h"
#include <chrono>

using namespace weft;
using namespace weft::sched;

namespace {
/// Every job is guaranteed this fraction of the max-min optimum
/// (docs/Scheduler.md, "gavel-throughput").
constexpr double kFairnessFloor = 0.75;

class GavelThroughput : public LPPolicy {
public:
  explicit GavelThroughput(double floor) : floor(floor) {}
  llvm::StringRef name() const override { return "gavel-throughput"; }

protected:
  llvm::Expected<GroupFractions> solve(const PolicyInput &in) override {
    auto start = std::chrono::steady_clock::now();
    unsigned numTypes = in.capacity.size();
    // The fairness floor: first the max-min optimum z* (the smallest
    // normalised effective throughput any job can be guaranteed).
    double minShare = 0;
    if (floor > 0) {
      double maxMinSeconds = 0;
      auto maxMin = solveMaxMinFractions(in, /*agnostic=*/false, maxMinSeconds,
                                         &minShare);
      if (!maxMin)
        return maxMin.takeError();
    }
    LinearProgram lp;
    GroupFractions result;
    result.groups = groupIdenticalJobs(in);
    const JobGroups &groups = result.groups;
    unsigned numGroups = groups.representative.size();
    std::vector<std::vector<int>> column(numGroups,
                                         std::vector<int>(numTypes, -1));
    std::vector<std::vector<std::pair<unsigned, double>>> typeRows(numTypes);
    std::vector<double> rate;
    for (unsigned g = 0; g < numGroups; ++g) {
      unsigned id = in.active[groups.representative[g]].id;
      const Job &job = in.jobs[id];
      double best = in.rates->bestRate(id);
      if (best <= 0)
        continue;
      std::vector<std::pair<unsigned, double>> once;
      for (unsigned t = 0; t < numTypes; ++t) {
        double r = job.scale <= in.capacity[t]
                       ? bestPlacementRate(in, id, t, job.scale)
                       : 0;
        if (r <= 0)
          continue;
        unsigned x = lp.addColumn(0, 1, groups.size[g] * job.weight * r / best);
        column[g][t] = x;
        once.push_back({x, 1});
        typeRows[t].push_back({x, double(job.scale) * groups.size[g]});
      }
      if (once.empty())
        continue;
      lp.addRow(once, -LinearProgram::kInf, 1);
      // Each job's normalised effective throughput at least floor x z*,
      // as in the max-min LP.
      double norm = fairShareRates(in, id, /*agnostic=*/false, rate);
      if (floor > 0 && minShare > 0 && norm > 0) {
        std::vector<std::pair<unsigned, double>> fair;
        for (unsigned t = 0; t < numTypes; ++t)
          if (column[g][t] >= 0)
            fair.push_back(
                {unsigned(column[g][t]), rate[t] / (job.weight * norm)});
        lp.addRow(fair, floor * minShare, LinearProgram::kInf);
      }
    }
    for (unsigned t = 0; t < numTypes; ++t)
      if (!typeRows[t].empty())
        lp.addRow(typeRows[t], -LinearProgram::kInf, in.capacity[t]);
    result.x.assign(numGroups, std::vector<double>(numTypes, 0));
    if (lp.numColumns() > 0) {
      auto values = lp.optimum(LinearProgram::Sense::Maximize);
      if (!values)
        return values.takeError();
      for (unsigned g = 0; g < numGroups; ++g)
        for (unsigned t = 0; t < numTypes; ++t)
          if (int c = column[g][t]; c >= 0)
            result.x[g][t] = (*values)[c];
    }
    seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  }

private:
  /// Fraction of the max-min optimum every job is guaranteed (0: none).
  double floor;
};
} // namespace

std::unique_ptr<Policy> sched::createGavelThroughput() {
  return std::make_unique<GavelThroughput>(kFairnessFloor);
}
