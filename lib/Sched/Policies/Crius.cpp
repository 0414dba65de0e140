//===- Crius.cpp - Cell-based joint allocation ---------------------------===//
//
// Crius (Cells): a Cell fixes a job's GPU type, GPU count (and pipeline
// stages when the oracle provides them; the table oracle does not). Cells are
// chosen jointly whenever jobs arrive or finish:
//  1. in order (deadline jobs earliest-deadline-first, then the smallest
//     served fraction of time in the cluster, then arrival) each job gets
//     its most efficient Cell (the count from scale/2 to 2 scale with the
//     best normalised rate per GPU on any type; ties to the smaller count)
//     on the type with the best normalised rate that has room, preferring
//     the type it runs on;
//  2. spare GPUs then go, one upgrade at a time, to the Cell change (more
//     GPUs, or another type) with the largest gain in normalised throughput
//     (rate / rate at the requested scale on the fastest type) per extra
//     GPU. Running jobs are thereby scaled and migrated as load changes.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include <cmath>
#include <queue>

using namespace weft;
using namespace weft::sched;

namespace {
struct Cell {
  int type = -1;
  unsigned count = 0;
  double norm = 0;
};

class Crius : public Policy {
public:
  llvm::StringRef name() const override { return "crius"; }
  bool elastic() const override { return true; }

  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override {
    if (!in.changed)
      return keepActive(in, previous);
    unsigned numTypes = in.capacity.size();
    // Deadline jobs earliest-deadline-first, then the smallest served
    // fraction. Least attained service instead starves long jobs once the
    // cluster is loaded: each arrival overtakes them (docs/Scheduler.md).
    std::vector<unsigned> order = byServedFraction(in, /*deadlinesFirst=*/true,
                                                   /*guaranteedFirst=*/false);
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    std::vector<Cell> cells(in.active.size());
    auto candidates = [&](unsigned id) {
      std::vector<unsigned> result;
      unsigned scale = in.jobs[id].scale;
      for (unsigned c : in.rates->counts(id))
        if (2 * c >= scale && c <= 2 * scale)
          result.push_back(c);
      return result;
    };
    auto norm = [&](unsigned id, unsigned t, unsigned c) {
      double best = in.rates->bestRate(id);
      return best > 0 ? bestPlacementRate(in, id, t, c) / best : 0.0;
    };
    // The count with the best normalised rate per GPU over the types that
    // could hold it (an infeasible Cell has rate 0 and is never chosen).
    auto efficientCount = [&](unsigned id, llvm::ArrayRef<unsigned> counts) {
      unsigned best = counts.front();
      double bestPerGpu = 0;
      for (unsigned c : counts)
        for (unsigned t = 0; t < numTypes; ++t) {
          double perGpu = in.capacity[t] >= c ? norm(id, t, c) / c : 0;
          if (perGpu > bestPerGpu * (1 + 1e-9)) {
            bestPerGpu = perGpu;
            best = c;
          }
        }
      return best;
    };
    // 1. Most efficient Cells.
    for (unsigned i : order) {
      unsigned id = in.active[i].id;
      std::vector<unsigned> counts = candidates(id);
      if (counts.empty())
        continue;
      unsigned c = efficientCount(id, counts);
      int current = in.active[i].current.empty()
                        ? -1
                        : int(in.active[i].current.front().type);
      Cell best;
      for (unsigned t = 0; t < numTypes; ++t) {
        double n = free[t] >= c ? norm(id, t, c) : 0;
        if (n <= 0)
          continue;
        if (int(t) == current)
          n *= 1.05; // Staying put avoids a restart.
        if (n > best.norm)
          best = {int(t), c, n};
      }
      if (best.type < 0)
        continue;
      best.norm = norm(id, best.type, c);
      free[best.type] -= c;
      cells[i] = best;
    }
    // 2. Upgrades by marginal normalised throughput per GPU (lazy greedy).
    auto bestUpgrade = [&](unsigned i, Cell &to) {
      unsigned id = in.active[i].id;
      const Cell &from = cells[i];
      double bestScore = 0;
      for (unsigned t = 0; t < numTypes; ++t)
        for (unsigned c : candidates(id)) {
          unsigned have = int(t) == from.type ? free[t] + from.count : free[t];
          if (c > have || (int(t) == from.type && c <= from.count))
            continue;
          double n = norm(id, t, c);
          unsigned extra = int(t) == from.type ? c - from.count : c;
          double score = (n - from.norm) / std::max(1u, extra);
          if (score > bestScore + 1e-12) {
            bestScore = score;
            to = {int(t), c, n};
          }
        }
      return bestScore;
    };
    std::priority_queue<std::pair<double, unsigned>> heap;
    for (unsigned i = 0; i < in.active.size(); ++i) {
      Cell to;
      if (cells[i].type >= 0) {
        double score = bestUpgrade(i, to);
        if (score > 0)
          heap.push({score, i});
      }
    }
    while (!heap.empty()) {
      auto [score, i] = heap.top();
      heap.pop();
      Cell to;
      double now = bestUpgrade(i, to);
      if (now <= 0)
        continue;
      if (now < score - 1e-12) {
        heap.push({now, i});
        continue;
      }
      free[cells[i].type] += cells[i].count;
      free[to.type] -= to.count;
      cells[i] = to;
      Cell next;
      double again = bestUpgrade(i, next);
      if (again > 0)
        heap.push({again, i});
    }
    previous.clear();
    for (unsigned i : order)
      if (cells[i].type >= 0)
        previous.push_back(
            {in.active[i].id, {{unsigned(cells[i].type), cells[i].count}}});
    return previous;
  }

private:
  std::vector<Assignment> previous;
};
} // namespace

std::unique_ptr<Policy> sched::createCrius() {
  return std::make_unique<Crius>();
}
