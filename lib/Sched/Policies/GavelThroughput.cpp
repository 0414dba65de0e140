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
class GavelThroughput : public LPPolicy {
public:
  llvm::StringRef name() const override { return "gavel-throughput"; }

protected:
  llvm::Expected<std::vector<std::vector<double>>>
  solve(const PolicyInput &in) override {
    auto start = std::chrono::steady_clock::now();
    unsigned numTypes = in.capacity.size();
    LinearProgram lp;
    JobGroups groups = groupIdenticalJobs(in);
    unsigned numGroups = groups.representative.size();
    std::vector<std::vector<int>> column(numGroups,
                                         std::vector<int>(numTypes, -1));
    std::vector<std::vector<std::pair<unsigned, double>>> typeRows(numTypes);
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
      if (!once.empty())
        lp.addRow(once, -LinearProgram::kInf, 1);
    }
    for (unsigned t = 0; t < numTypes; ++t)
      if (!typeRows[t].empty())
        lp.addRow(typeRows[t], -LinearProgram::kInf, in.capacity[t]);
    std::vector<std::vector<double>> fractions(
        in.active.size(), std::vector<double>(numTypes, 0));
    if (lp.numColumns() > 0) {
      auto values = lp.optimum(LinearProgram::Sense::Maximize);
      if (!values)
        return values.takeError();
      for (unsigned i = 0; i < in.active.size(); ++i)
        for (unsigned t = 0; t < numTypes; ++t)
          if (int c = column[groups.groupOf[i]][t]; c >= 0)
            fractions[i][t] = (*values)[c];
    }
    seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return fractions;
  }
};
} // namespace

std::unique_ptr<Policy> sched::createGavelThroughput() {
  return std::make_unique<GavelThroughput>();
}
