//===- Hadar.cpp - Primal-dual heterogeneity-aware allocation ------------===//
//
// Sultana et al., "Hadar: Heterogeneity-Aware Optimization-Based Online
// Scheduling for Deep Learning Cluster" (IPDPS'24), and HadarE (forking).
// Every round, jobs in least-attained-service order each take the GPU type
// that maximises utility minus price. Utility per GPU of job j on type t is
// its normalised rate u_jt = r_jt / r_j* in (0, 1]. The price of type t rises
// exponentially with its utilisation y_t in [0, 1]:
//   p_t(y) = (L / 2) (2 / L)^y,   L = min positive u_jt this round,
// so an idle type is cheaper than any utility and a full one dearer than all.
// A job takes a type only if u_jt > p_t. Left-over GPUs then go to jobs still
// waiting (work conservation). With --fork (HadarE) a running job also forks
// copies onto other types with free GPUs; its rate is the sum of the copies.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include <cmath>
#include <numeric>

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
    std::vector<unsigned> order(in.active.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      if (in.active[a].attainedS != in.active[b].attainedS)
        return in.active[a].attainedS < in.active[b].attainedS;
      return in.active[a].id < in.active[b].id;
    });
    double low = 1;
    auto utility = [&](unsigned id, unsigned t) {
      unsigned scale = in.jobs[id].scale;
      double best = in.rates->bestRate(id);
      if (best <= 0 || scale > in.capacity[t])
        return 0.0;
      return bestPlacementRate(in, id, t, scale) / best;
    };
    for (const ActiveJob &job : in.active)
      for (unsigned t = 0; t < numTypes; ++t) {
        double u = utility(job.id, t);
        if (u > 0)
          low = std::min(low, u);
      }
    low = std::max(low, 0.01);
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    auto price = [&](unsigned t) -> double {
      if (in.capacity[t] == 0)
        return INFINITY;
      double y = 1.0 - double(free[t]) / in.capacity[t];
      return low / 2 * std::pow(2 / low, y);
    };
    std::vector<int> chosen(in.active.size(), -1);
    std::vector<Assignment> plan;
    for (unsigned pass = 0; pass < 2; ++pass)
      for (unsigned i : order) {
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
        if (best < 0)
          continue;
        chosen[i] = best;
        free[best] -= scale;
      }
    for (unsigned i : order) {
      if (chosen[i] < 0)
        continue;
      unsigned id = in.active[i].id;
      unsigned scale = in.jobs[id].scale;
      Assignment a{id, {{unsigned(chosen[i]), scale}}};
      plan.push_back(std::move(a));
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
};
} // namespace

std::unique_ptr<Policy> sched::createHadar(const PolicyOptions &opts) {
  return std::make_unique<Hadar>(opts.fork);
}
