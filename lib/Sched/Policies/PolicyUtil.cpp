//===- PolicyUtil.cpp - Helpers shared by the policies -------------------===//

#include "PolicyUtil.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

using namespace weft;
using namespace weft::sched;

Policy::~Policy() = default;

std::vector<unsigned> sched::byArrival(const PolicyInput &in) {
  std::vector<unsigned> order(in.active.size());
  std::iota(order.begin(), order.end(), 0);
  auto earlier = [&](unsigned a, unsigned b) {
    return in.jobs[in.active[a].id].arrivalS <
           in.jobs[in.active[b].id].arrivalS;
  };
  // The simulator lists active jobs in arrival order already: a linear
  // check spares a sort per round.
  if (!std::is_sorted(order.begin(), order.end(), earlier))
    llvm::stable_sort(order, earlier);
  return order;
}

double sched::servedFraction(const PolicyInput &in, const ActiveJob &job) {
  const Job &spec = in.jobs[job.id];
  double best = in.rates->bestRate(job.id);
  // Average speed of the types the job ran on, relative to its fastest.
  double rounds = 0, weighted = 0;
  for (unsigned t = 0; t < job.roundsOnType.size(); ++t) {
    if (!job.roundsOnType[t])
      continue;
    double rate = bestPlacementRate(in, job.id, t, spec.scale);
    double speed = best > 0 ? std::min(1.0, rate / best) : 1.0;
    rounds += job.roundsOnType[t];
    weighted += job.roundsOnType[t] * speed;
  }
  double speed = rounds > 0 ? weighted / rounds : 1.0;
  double inCluster = in.nowS - spec.arrivalS;
  return job.attainedS * speed / std::max(inCluster, in.roundS);
}

std::vector<unsigned> sched::byServedFraction(const PolicyInput &in,
                                              bool deadlinesFirst,
                                              bool guaranteedFirst) {
  std::vector<unsigned> order = byArrival(in);
  std::vector<double> key(in.active.size());
  for (unsigned i = 0; i < in.active.size(); ++i)
    key[i] = servedFraction(in, in.active[i]);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    const Job &ja = in.jobs[in.active[a].id], &jb = in.jobs[in.active[b].id];
    if (deadlinesFirst) {
      double da = ja.deadlineS.value_or(INFINITY);
      double db = jb.deadlineS.value_or(INFINITY);
      if (da != db)
        return da < db;
    }
    bool ga = ja.guaranteedRate > 0, gb = jb.guaranteedRate > 0;
    if (guaranteedFirst && ga != gb)
      return ga;
    return key[a] < key[b];
  });
  return order;
}

double sched::equalShareRate(const PolicyInput &in, unsigned job) {
  double total = 0, rate = 0;
  for (unsigned t = 0; t < in.capacity.size(); ++t)
    total += in.capacity[t];
  if (total == 0)
    return 0;
  unsigned scale = in.jobs[job].scale;
  for (unsigned t = 0; t < in.capacity.size(); ++t)
    rate += in.capacity[t] / total * in.rates->rate(job, t, scale, true);
  return rate;
}

std::vector<Assignment>
sched::roundTimeFractions(const PolicyInput &in,
                          const std::vector<std::vector<double>> &fractions) {
  struct Candidate {
    double priority;
    double fraction;
    unsigned index, type;
  };
  std::vector<Candidate> candidates;
  unsigned numTypes = in.capacity.size();
  for (unsigned i = 0; i < in.active.size(); ++i) {
    const ActiveJob &job = in.active[i];
    unsigned scale = in.jobs[job.id].scale;
    for (unsigned t = 0; t < numTypes; ++t) {
      if (scale > in.capacity[t] ||
          bestPlacementRate(in, job.id, t, scale) <= 0)
        continue;
      double x = fractions[i][t];
      double received =
          job.roundsActive ? double(job.roundsOnType[t]) / job.roundsActive : 0;
      double priority = x <= 1e-9 ? 0 : received <= 0 ? 1e9 * x : x / received;
      candidates.push_back({priority, x, i, t});
    }
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    if (a.priority != b.priority)
      return a.priority > b.priority;
    return a.fraction > b.fraction;
  });
  std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
  std::vector<bool> taken(in.active.size(), false);
  std::vector<Assignment> plan;
  for (const Candidate &c : candidates) {
    unsigned id = in.active[c.index].id;
    unsigned scale = in.jobs[id].scale;
    if (taken[c.index] || free[c.type] < scale)
      continue;
    taken[c.index] = true;
    free[c.type] -= scale;
    plan.push_back({id, {{c.type, scale}}});
  }
  return plan;
}

JobGroups sched::groupIdenticalJobs(const PolicyInput &in) {
  JobGroups groups;
  std::map<std::pair<unsigned, double>, unsigned> index;
  for (const ActiveJob &job : in.active) {
    auto key =
        std::make_pair(in.rates->classId(job.id), in.jobs[job.id].weight);
    auto [it, inserted] = index.insert({key, groups.representative.size()});
    if (inserted) {
      groups.representative.push_back(groups.groupOf.size());
      groups.size.push_back(0);
    }
    groups.groupOf.push_back(it->second);
    ++groups.size[it->second];
  }
  return groups;
}

std::vector<Assignment>
sched::keepActive(const PolicyInput &in,
                  const std::vector<Assignment> &previous) {
  std::vector<bool> active(in.jobs.size(), false);
  for (const ActiveJob &job : in.active)
    active[job.id] = true;
  std::vector<Assignment> plan;
  for (const Assignment &a : previous)
    if (active[a.job])
      plan.push_back(a);
  return plan;
}
