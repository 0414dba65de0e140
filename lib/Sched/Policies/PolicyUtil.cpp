//===- PolicyUtil.cpp - Helpers shared by the policies -------------------===//

#include "PolicyUtil.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

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

double sched::servedFraction(const PolicyInput &in, const ActiveJob &job,
                             bool bySpeed) {
  const Job &spec = in.jobs[job.id];
  double inCluster = in.nowS - spec.arrivalS;
  if (job.attainedS == 0 || !bySpeed)
    return job.attainedS / std::max(inCluster, in.roundS);
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
  return job.attainedS * speed / std::max(inCluster, in.roundS);
}

ServedFractions::ServedFractions(const PolicyInput &in)
    : in(in), numTypes(in.capacity.size()),
      speed(in.rates->numClasses() * in.capacity.size(), -1.0) {}

double ServedFractions::operator()(const ActiveJob &job) {
  const Job &spec = in.jobs[job.id];
  double inCluster = in.nowS - spec.arrivalS;
  if (job.attainedS == 0)
    return job.attainedS / std::max(inCluster, in.roundS);
  double *classSpeed = &speed[in.rates->classId(job.id) * numTypes];
  double rounds = 0, weighted = 0;
  for (unsigned t = 0; t < job.roundsOnType.size(); ++t) {
    if (!job.roundsOnType[t])
      continue;
    if (classSpeed[t] < 0) {
      double best = in.rates->bestRate(job.id);
      double rate = bestPlacementRate(in, job.id, t, spec.scale);
      classSpeed[t] = best > 0 ? std::min(1.0, rate / best) : 1.0;
    }
    rounds += job.roundsOnType[t];
    weighted += job.roundsOnType[t] * classSpeed[t];
  }
  double speed = rounds > 0 ? weighted / rounds : 1.0;
  return job.attainedS * speed / std::max(inCluster, in.roundS);
}

std::vector<unsigned> sched::byServedFraction(const PolicyInput &in,
                                              bool deadlinesFirst,
                                              bool guaranteedFirst) {
  std::vector<unsigned> order = byArrival(in);
  std::vector<double> key(in.active.size());
  ServedFractions served(in);
  for (unsigned i = 0; i < in.active.size(); ++i)
    key[i] = served(in.active[i]);
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
  return roundTimeFractions(
      in, [&](unsigned i) -> llvm::ArrayRef<double> { return fractions[i]; });
}

std::vector<Assignment> sched::roundTimeFractions(
    const PolicyInput &in,
    llvm::function_ref<llvm::ArrayRef<double>(unsigned)> fractionsOf) {
  // A pair (i, t) is a candidate when job i can run on type t. The order:
  // priority (descending), fraction (descending), then (i, t). Pairs with a
  // fraction above 1e-9 have a positive priority and come first, drawn from
  // a heap; the rest have priority 0 and follow by fraction: positive ones
  // (a handful of LP round-offs), then the zeros in (i, t) order without
  // being listed, then negative round-offs.
  struct Candidate {
    double priority, fraction;
    unsigned index, type;
  };
  unsigned numTypes = in.capacity.size();
  auto feasible = [&](unsigned i, unsigned t) {
    unsigned id = in.active[i].id;
    unsigned scale = in.jobs[id].scale;
    return scale <= in.capacity[t] && bestPlacementRate(in, id, t, scale) > 0;
  };
  auto before = [](const Candidate &a, const Candidate &b) {
    if (a.priority != b.priority)
      return a.priority > b.priority;
    if (a.fraction != b.fraction)
      return a.fraction > b.fraction;
    if (a.index != b.index)
      return a.index < b.index;
    return a.type < b.type;
  };
  std::vector<Candidate> served, small, negative;
  for (unsigned i = 0; i < in.active.size(); ++i) {
    const ActiveJob &job = in.active[i];
    llvm::ArrayRef<double> x = fractionsOf(i);
    for (unsigned t = 0; t < numTypes; ++t) {
      if (x[t] == 0 || !feasible(i, t))
        continue;
      if (x[t] <= 1e-9) {
        (x[t] > 0 ? small : negative).push_back({0, x[t], i, t});
        continue;
      }
      double received =
          job.roundsActive ? double(job.roundsOnType[t]) / job.roundsActive : 0;
      double priority = received <= 0 ? 1e9 * x[t] : x[t] / received;
      served.push_back({priority, x[t], i, t});
    }
  }
  std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
  unsigned freeTotal = 0;
  for (unsigned f : free)
    freeTotal += f;
  std::vector<char> taken(in.active.size(), 0);
  std::vector<Assignment> plan;
  auto offer = [&](unsigned i, unsigned t) {
    unsigned id = in.active[i].id;
    unsigned scale = in.jobs[id].scale;
    if (taken[i] || free[t] < scale)
      return;
    taken[i] = 1;
    free[t] -= scale;
    freeTotal -= scale;
    plan.push_back({id, {{t, scale}}});
  };
  // Served pairs by (type, GPU count): a bucket is dropped once its type
  // has fewer free GPUs than the count.
  std::vector<unsigned> scales;
  for (const ActiveJob &job : in.active)
    scales.push_back(in.jobs[job.id].scale);
  llvm::sort(scales);
  scales.erase(std::unique(scales.begin(), scales.end()), scales.end());
  std::vector<std::vector<unsigned>> buckets(numTypes * scales.size());
  for (unsigned k = 0; k < served.size(); ++k) {
    unsigned scale = in.jobs[in.active[served[k].index].id].scale;
    unsigned s = llvm::lower_bound(scales, scale) - scales.begin();
    buckets[served[k].type * scales.size() + s].push_back(k);
  }
  auto servedBefore = [&](unsigned a, unsigned b) {
    return before(served[a], served[b]);
  };
  MergedOrder<decltype(servedBefore)> order(buckets, servedBefore);
  unsigned k, bucket;
  while (freeTotal > 0 && order.next(k, bucket)) {
    unsigned t = served[k].type;
    if (free[t] < scales[bucket % scales.size()]) {
      order.drop();
      continue;
    }
    offer(served[k].index, t);
  }
  llvm::sort(small, before);
  for (const Candidate &c : small)
    if (freeTotal > 0)
      offer(c.index, c.type);
  for (unsigned i = 0; i < in.active.size() && freeTotal > 0; ++i) {
    if (taken[i])
      continue;
    llvm::ArrayRef<double> x = fractionsOf(i);
    unsigned scale = in.jobs[in.active[i].id].scale;
    for (unsigned t = 0; t < numTypes && !taken[i]; ++t)
      if (x[t] == 0 && free[t] >= scale && feasible(i, t))
        offer(i, t);
  }
  llvm::sort(negative, before);
  for (const Candidate &c : negative)
    if (freeTotal > 0)
      offer(c.index, c.type);
  return plan;
}

JobGroups sched::groupIdenticalJobs(const PolicyInput &in) {
  JobGroups groups;
  // Groups are numbered in order of first appearance (the LP's column
  // order); a hash map keeps the pass linear in the jobs.
  struct KeyHash {
    size_t operator()(const std::pair<unsigned, double> &key) const {
      return std::hash<double>()(key.second) * 31 + key.first;
    }
  };
  std::unordered_map<std::pair<unsigned, double>, unsigned, KeyHash> index;
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
