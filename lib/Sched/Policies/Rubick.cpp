//===- Rubick.cpp - Reconfiguring running jobs by sensitivity ------------===//
//
// Rubick (Zhang et al., "Rubick: Exploiting Job Reconfigurability for Deep
// Learning Cluster Scheduling", 2024). Whenever jobs arrive or finish:
//  1. guaranteed jobs (guaranteed_rate > 0) get the smallest (type, count)
//     whose rate meets the guarantee (else the fastest that fits);
//  2. best-effort jobs, by smallest served fraction of their time in the
//     cluster, get their most efficient count (best normalised rate per
//     GPU on any type; ties to the smaller) on the type with the best rate
//     per GPU;
//  3. spare GPUs grow jobs along their sensitivity curve (rate vs GPU count
//     on their type), steepest normalised slope first, while one more GPU
//     still adds at least the knee (1%) of the current rate.
// Under load jobs shrink back to their minimum; when it lifts they grow.
// Execution-plan changes (ZeRO, TP/PP, checkpointing) need the compiler
// oracle and are not modelled with the table oracle.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include <queue>

using namespace weft;
using namespace weft::sched;

namespace {
class Rubick : public Policy {
public:
  explicit Rubick(double knee) : knee(knee) {}
  llvm::StringRef name() const override { return "rubick"; }
  bool elastic() const override { return true; }

  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override {
    if (!in.changed)
      return keepActive(in, previous);
    unsigned numTypes = in.capacity.size();
    // Guaranteed jobs first, then by served fraction (least attained
    // service would starve long jobs under load).
    std::vector<unsigned> order = byServedFraction(in, /*deadlinesFirst=*/false,
                                                   /*guaranteedFirst=*/true);
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    std::vector<int> type(in.active.size(), -1);
    std::vector<unsigned> count(in.active.size(), 0);
    for (unsigned i : order) {
      unsigned id = in.active[i].id;
      double guarantee = in.jobs[id].guaranteedRate;
      llvm::ArrayRef<unsigned> counts = in.rates->counts(id);
      int bestType = -1;
      unsigned bestCount = 0;
      // A best-effort job's minimum: its most efficient count. The smallest
      // count would run an 8-GPU job on one GPU for as long as the cluster
      // stays full.
      unsigned minCount = counts.front();
      double top = in.rates->bestRate(id), bestPerGpu = 0;
      for (unsigned c : counts)
        for (unsigned t = 0; t < numTypes && top > 0; ++t) {
          double perGpu = in.capacity[t] >= c
                              ? bestPlacementRate(in, id, t, c) / top / c
                              : 0;
          if (perGpu > bestPerGpu * (1 + 1e-9)) {
            bestPerGpu = perGpu;
            minCount = c;
          }
        }
      double bestValue = 0;
      for (unsigned t = 0; t < numTypes; ++t)
        for (unsigned c : counts) {
          if (c > free[t])
            continue;
          double rate = bestPlacementRate(in, id, t, c);
          if (rate <= 0)
            continue;
          double value;
          if (guarantee > 0)
            // Meeting the guarantee with few GPUs beats everything; else
            // the fastest Cell.
            value = rate >= guarantee ? 1e6 / c : rate / (1e3 * guarantee);
          else
            value = c == minCount ? rate / c : 0;
          if (value > bestValue) {
            bestValue = value;
            bestType = t;
            bestCount = c;
          }
        }
      if (bestType < 0)
        continue;
      type[i] = bestType;
      count[i] = bestCount;
      free[bestType] -= bestCount;
    }
    // Growth along the sensitivity curves.
    auto nextStep = [&](unsigned i, unsigned &next) {
      if (type[i] < 0)
        return 0.0;
      unsigned id = in.active[i].id;
      double best = in.rates->bestRate(id);
      double rate = bestPlacementRate(in, id, type[i], count[i]);
      for (unsigned c : in.rates->counts(id)) {
        if (c <= count[i])
          continue;
        if (c - count[i] > free[type[i]])
          return 0.0;
        double grown = bestPlacementRate(in, id, type[i], c);
        double perGpu = (grown - rate) / (c - count[i]);
        if (best <= 0 || rate <= 0 || perGpu < knee * rate)
          return 0.0;
        next = c;
        return perGpu / best;
      }
      return 0.0;
    };
    std::priority_queue<std::pair<double, unsigned>> heap;
    for (unsigned i = 0; i < in.active.size(); ++i) {
      unsigned next = 0;
      double slope = nextStep(i, next);
      if (slope > 0)
        heap.push({slope, i});
    }
    while (!heap.empty()) {
      auto [slope, i] = heap.top();
      heap.pop();
      unsigned next = 0;
      double now = nextStep(i, next);
      if (now <= 0)
        continue;
      if (now < slope - 1e-12) {
        heap.push({now, i});
        continue;
      }
      free[type[i]] -= next - count[i];
      count[i] = next;
      double again = nextStep(i, next);
      if (again > 0)
        heap.push({again, i});
    }
    previous.clear();
    for (unsigned i : order)
      if (type[i] >= 0)
        previous.push_back({in.active[i].id, {{unsigned(type[i]), count[i]}}});
    return previous;
  }

private:
  double knee;
  std::vector<Assignment> previous;
};
} // namespace

std::unique_ptr<Policy> sched::createRubick(const PolicyOptions &opts) {
  return std::make_unique<Rubick>(opts.knee);
}
