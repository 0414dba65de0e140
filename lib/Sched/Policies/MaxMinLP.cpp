//===- MaxMinLP.cpp - Gavel's max-min fairness LP over time fractions ----===//
//
//   maximise z
//   s.t.  Σ_t x_jt r_jt / (w_j e_j) >= z      for every job j
//         Σ_t x_jt <= 1                       for every job j
//         Σ_j s_j x_jt <= C_t                 for every GPU type t
//         0 <= x_jt <= 1
// r_jt: job j's rate on type t at its scale s_j; e_j: its equal-share rate
// (equalShareRate); w_j its weight; C_t healthy GPUs of type t. With
// `agnostic`, r_jt = 1 wherever j can run on t. Identical jobs share
// variables (groupIdenticalJobs): the capacity rows count them n_g times.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include "weft/Support/LinearProgram.h"
#include <chrono>

using namespace weft;
using namespace weft::sched;

double sched::fairShareRates(const PolicyInput &in, unsigned id, bool agnostic,
                             std::vector<double> &rate) {
  const Job &job = in.jobs[id];
  unsigned numTypes = in.capacity.size();
  rate.assign(numTypes, 0);
  double norm = 0, total = 0;
  for (unsigned t = 0; t < numTypes; ++t) {
    if (job.scale > in.capacity[t])
      continue;
    double r = bestPlacementRate(in, id, t, job.scale);
    if (r <= 0)
      continue;
    rate[t] = agnostic ? 1.0 : r;
    total += in.capacity[t];
    norm += in.capacity[t] * rate[t];
  }
  return norm > 0 ? norm / total : 0;
}

llvm::Expected<GroupFractions>
sched::solveMaxMinFractions(const PolicyInput &in, bool agnostic,
                            double &seconds, double *minShare) {
  auto start = std::chrono::steady_clock::now();
  unsigned numTypes = in.capacity.size();
  LinearProgram lp;
  unsigned z = lp.addColumn(0, LinearProgram::kInf, 1);
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
    double norm = fairShareRates(in, id, agnostic, rate);
    if (norm <= 0)
      continue;
    std::vector<std::pair<unsigned, double>> fair, once;
    for (unsigned t = 0; t < numTypes; ++t) {
      if (rate[t] <= 0)
        continue;
      unsigned x = lp.addColumn(0, 1, 0);
      column[g][t] = x;
      fair.push_back({x, rate[t] / (job.weight * norm)});
      once.push_back({x, 1});
      typeRows[t].push_back({x, double(job.scale) * groups.size[g]});
    }
    fair.push_back({z, -1});
    lp.addRow(fair, 0, LinearProgram::kInf);
    lp.addRow(once, -LinearProgram::kInf, 1);
  }
  for (unsigned t = 0; t < numTypes; ++t)
    if (!typeRows[t].empty())
      lp.addRow(typeRows[t], -LinearProgram::kInf, in.capacity[t]);
  result.x.assign(numGroups, std::vector<double>(numTypes, 0));
  if (minShare)
    *minShare = 0;
  if (lp.numColumns() > 1) {
    auto values = lp.optimum(LinearProgram::Sense::Maximize);
    if (!values)
      return values.takeError();
    for (unsigned g = 0; g < numGroups; ++g)
      for (unsigned t = 0; t < numTypes; ++t)
        if (int c = column[g][t]; c >= 0)
          result.x[g][t] = (*values)[c];
    if (minShare)
      *minShare = (*values)[z];
  }
  seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}
