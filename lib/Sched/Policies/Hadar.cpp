//===- Hadar.cpp - Primal-dual heterogeneity-aware allocation ------------===//
//
// Sultana et al., "Hadar: Heterogeneity-Aware Optimization-Based Online
// Scheduling for Deep Learning Cluster" (IPDPS'24), and HadarE (forking).
// Every round, jobs by smallest served fraction (an aging order, our
// deviation from least attained service; docs/Scheduler.md) each take the
// GPU type that maximises utility minus price. Utility per GPU of job j on type
// t is its normalised rate u_jt = r_jt / r_j* in (0, 1]. The price of type t
// rises exponentially with its utilisation y_t in [0, 1]:
//   p_t(y) = (L / 2) (2 / L)^y,   L = min positive u_jt this round,
// so an idle type is cheaper than any utility and a full one dearer than all.
// A job takes a type only if u_jt > p_t. Left-over GPUs then go to jobs still
// waiting (work conservation). With --fork (HadarE) a running job also forks
// copies onto other types with free GPUs; its rate is the sum of the copies.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include <cmath>
#include <tuple>

using namespace weft;
using namespace weft::sched;

namespace {
class Hadar : public Policy {
public:
  explicit Hadar(bool fork) : fork(fork) {}
  llvm::StringRef name() const override {
    return fork ? "hadar-fork" : "hadar";
  }

  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override {
    unsigned numTypes = in.capacity.size();
    const RateModel &rates = *in.rates;
    // Jobs of one class have the same utilities: bucket them by class.
    unsigned numClasses = rates.numClasses();
    byClass.resize(numClasses);
    for (std::vector<unsigned> &bucket : byClass)
      bucket.clear();
    for (unsigned i = 0; i < in.active.size(); ++i)
      byClass[rates.classId(in.active[i].id)].push_back(i);
    utilities.assign(numClasses * numTypes, 0.0);
    double low = 1;
    for (unsigned c = 0; c < numClasses; ++c) {
      if (byClass[c].empty())
        continue;
      unsigned id = in.active[byClass[c].front()].id;
      unsigned scale = in.jobs[id].scale;
      double best = rates.bestRate(id);
      for (unsigned t = 0; t < numTypes; ++t) {
        if (best <= 0 || scale > in.capacity[t])
          continue;
        double u = bestPlacementRate(in, id, t, scale) / best;
        utilities[c * numTypes + t] = u;
        if (u > 0)
          low = std::min(low, u);
      }
    }
    low = std::max(low, 0.01);
    auto utility = [&](unsigned id, unsigned t) {
      return utilities[rates.classId(id) * numTypes + t];
    };
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    unsigned freeTotal = 0;
    for (unsigned f : free)
      freeTotal += f;
    auto price = [&](unsigned t) -> double {
      if (in.capacity[t] == 0)
        return INFINITY;
      double y = 1.0 - double(free[t]) / in.capacity[t];
      return low / 2 * std::pow(2 / low, y);
    };
    // Smallest served fraction (run time in seconds of the job's fastest
    // type / time in the cluster) first, then arrival. Least attained
    // service (the order we had first) starved the longest jobs once the
    // cluster was loaded: every arrival had less service than they
    // (docs/Scheduler.md). Keys in one array: the heaps compare them often.
    keys.resize(in.active.size());
    ServedFractions served(in);
    for (unsigned i = 0; i < in.active.size(); ++i) {
      const ActiveJob &job = in.active[i];
      keys[i] = {served(job), in.jobs[job.id].arrivalS, i};
    }
    auto before = [&](unsigned a, unsigned b) { return keys[a] < keys[b]; };
    chosen.assign(in.active.size(), -1);
    std::vector<unsigned> taken;
    // Pass 0: the type maximising utility - price, if positive; pass 1
    // (work conservation): the type of highest utility with room. A job
    // that gets nothing leaves its class's later jobs nothing too (free
    // GPUs only fall and prices only rise within a pass): the class is
    // dropped, so a pass ends when the cluster is full or every class is.
    for (unsigned pass = 0; pass < 2; ++pass) {
      buckets = byClass;
      MergedOrder<decltype(before)> order(buckets, before);
      unsigned i, c;
      while (freeTotal > 0 && order.next(i, c)) {
        if (chosen[i] >= 0)
          continue;
        unsigned id = in.active[i].id;
        unsigned scale = in.jobs[id].scale;
        int best = -1;
        double bestValue = pass == 0 ? 0 : -INFINITY;
        for (unsigned t = 0; t < numTypes; ++t) {
          double u = utility(id, t);
          if (u <= 0 || free[t] < scale)
            continue;
          double value = pass == 0 ? u - price(t) : u;
          if (value > bestValue) {
            bestValue = value;
            best = t;
          }
        }
        if (best < 0) {
          order.drop();
          continue;
        }
        chosen[i] = best;
        free[best] -= scale;
        freeTotal -= scale;
        taken.push_back(i);
      }
    }
    llvm::sort(taken, before);
    std::vector<Assignment> plan;
    for (unsigned i : taken) {
      unsigned id = in.active[i].id;
      unsigned scale = in.jobs[id].scale;
      plan.push_back({id, {{unsigned(chosen[i]), scale}}});
    }
    if (!fork)
      return plan;
    // HadarE: fork copies onto other types while GPUs are free.
    for (Assignment &a : plan) {
      unsigned scale = in.jobs[a.job].scale;
      for (unsigned t = 0; t < numTypes; ++t) {
        if (t == a.parts.front().type || free[t] < scale ||
            utility(a.job, t) <= 0)
          continue;
        a.parts.push_back({t, scale});
        free[t] -= scale;
      }
    }
    return plan;
  }

private:
  bool fork;
  /// Per round, kept to reuse their memory: utility per (job class,
  /// type), active indices by class (and a copy consumed by each pass), the
  /// type chosen per active index (-1: none).
  std::vector<double> utilities;
  std::vector<std::vector<unsigned>> byClass, buckets;
  std::vector<int> chosen;
  std::vector<std::tuple<double, double, unsigned>> keys;
};
} // namespace

std::unique_ptr<Policy> sched::createHadar(const PolicyOptions &opts) {
  return std::make_unique<Hadar>(opts.fork);
}
