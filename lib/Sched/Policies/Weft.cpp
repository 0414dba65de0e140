//===- Weft.cpp - Cell selection over homogeneous and mixed Cells ---------===//
//
// Crius's joint Cell allocation (Crius.cpp) with heterogeneous Cells: a Cell
// is one GPU type and count, or two types with a count each run as one plan
// (RateModel::mixedRate: the compiler oracle's heterogeneous plan; stage
// counts are the oracle's best for the Cell). On arrivals, completions and
// failures:
//  1. in order of deadline, then smallest served fraction, each job gets
//     crius's most efficient GPU count (best normalised rate per GPU on one
//     type, sizes scale/2 to 2 scale, ties to fewer GPUs) on the fastest
//     Cell of that size with room, of one type or two (its current Cell
//     favoured by 5 %, avoiding a restart);
//  2. spare GPUs go, one upgrade at a time, to the Cell change with the
//     largest gain in normalised rate per extra GPU (lazy greedy), which may
//     add GPUs of another type to a job's Cell.
// A Cell the oracle marks infeasible (out of memory) has rate 0 and is
// never chosen. docs/Scheduler.md "weft".
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include <queue>

using namespace weft;
using namespace weft::sched;

namespace {
/// (type, count) per part, types ascending.
using CellParts = std::vector<std::pair<unsigned, unsigned>>;

struct Choice {
  CellParts parts;
  double norm = 0;
  unsigned gpus() const {
    unsigned n = 0;
    for (auto [t, c] : parts)
      n += c;
    return n;
  }
};

class WeftPolicy : public Policy {
public:
  llvm::StringRef name() const override { return "weft"; }
  bool elastic() const override { return true; }

  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override {
    if (!in.changed)
      return keepActive(in, previous);
    unsigned numTypes = in.capacity.size();
    std::vector<unsigned> order = byServedFraction(in, /*deadlinesFirst=*/true,
                                                   /*guaranteedFirst=*/false);
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    std::vector<Choice> cells(in.active.size());
    std::vector<std::vector<Choice>> candidates(in.active.size());
    for (unsigned i = 0; i < in.active.size(); ++i)
      candidates[i] = candidatesOf(in, in.active[i].id, numTypes);
    auto fits = [&](const CellParts &parts, const CellParts &held) {
      for (auto [t, c] : parts) {
        unsigned have = free[t];
        for (auto [ht, hc] : held)
          if (ht == t)
            have += hc;
        if (c > have)
          return false;
      }
      return true;
    };
    // 1. As crius: the GPU count with the best normalised rate per GPU on
    // any one type that could hold it (ties to fewer GPUs); then, among the
    // Cells of that many GPUs with room, one type or two, the fastest
    // (its current Cell favoured by 5 %, avoiding a restart).
    for (unsigned i : order) {
      unsigned count = 0;
      double bestPerGpu = 0;
      for (const Choice &c : candidates[i]) {
        if (c.parts.size() != 1 || in.capacity[c.parts[0].first] < c.gpus())
          continue;
        double perGpu = c.norm / c.gpus();
        if (perGpu > bestPerGpu * (1 + 1e-9) ||
            (perGpu >= bestPerGpu * (1 - 1e-9) && c.gpus() < count)) {
          bestPerGpu = perGpu;
          count = c.gpus();
        }
      }
      if (!count)
        continue;
      CellParts current;
      for (const Part &p : in.active[i].current)
        current.emplace_back(p.type, p.count);
      llvm::sort(current);
      const Choice *best = nullptr;
      double bestScore = 0;
      for (const Choice &c : candidates[i]) {
        if (c.gpus() != count || c.norm <= 0 || !fits(c.parts, {}))
          continue;
        double score = c.norm * (c.parts == current ? 1.05 : 1.0);
        if (score > bestScore) {
          bestScore = score;
          best = &c;
        }
      }
      if (!best)
        continue;
      for (auto [t, c] : best->parts)
        free[t] -= c;
      cells[i] = *best;
    }
    // 2. Upgrades by marginal normalised throughput per extra GPU.
    auto bestUpgrade = [&](unsigned i, Choice &to) {
      const Choice &from = cells[i];
      double bestScore = 0;
      for (const Choice &c : candidates[i]) {
        if (c.gpus() <= from.gpus() || c.norm <= from.norm ||
            !fits(c.parts, from.parts))
          continue;
        double score = (c.norm - from.norm) / (c.gpus() - from.gpus());
        if (score > bestScore + 1e-12) {
          bestScore = score;
          to = c;
        }
      }
      return bestScore;
    };
    std::priority_queue<std::pair<double, unsigned>> heap;
    for (unsigned i = 0; i < in.active.size(); ++i) {
      Choice to;
      if (!cells[i].parts.empty())
        if (double score = bestUpgrade(i, to); score > 0)
          heap.push({score, i});
    }
    while (!heap.empty()) {
      auto [score, i] = heap.top();
      heap.pop();
      Choice to;
      double now = bestUpgrade(i, to);
      if (now <= 0)
        continue;
      if (now < score - 1e-12) {
        heap.push({now, i});
        continue;
      }
      for (auto [t, c] : cells[i].parts)
        free[t] += c;
      for (auto [t, c] : to.parts)
        free[t] -= c;
      cells[i] = to;
      Choice next;
      if (double again = bestUpgrade(i, next); again > 0)
        heap.push({again, i});
    }
    previous.clear();
    for (unsigned i : order) {
      if (cells[i].parts.empty())
        continue;
      Assignment a;
      a.job = in.active[i].id;
      for (auto [t, c] : cells[i].parts)
        a.parts.push_back({t, c});
      a.mixed = a.parts.size() > 1;
      previous.push_back(std::move(a));
    }
    return previous;
  }

private:
  /// The job's Cells from scale/2 to 2 scale GPUs: one type, or two types
  /// with a known count each; with their normalised rates.
  static std::vector<Choice> candidatesOf(const PolicyInput &in, unsigned id,
                                          unsigned numTypes) {
    unsigned scale = in.jobs[id].scale;
    double best = in.rates->bestRate(id);
    std::vector<Choice> result;
    if (best <= 0)
      return result;
    llvm::ArrayRef<unsigned> counts = in.rates->counts(id);
    auto inRange = [&](unsigned n) { return 2 * n >= scale && n <= 2 * scale; };
    for (unsigned t = 0; t < numTypes; ++t)
      for (unsigned c : counts)
        if (inRange(c) && c <= in.capacity[t])
          result.push_back({{{t, c}}, bestPlacementRate(in, id, t, c) / best});
    for (unsigned t1 = 0; t1 < numTypes; ++t1)
      for (unsigned t2 = t1 + 1; t2 < numTypes; ++t2)
        for (unsigned c1 : counts)
          for (unsigned c2 : counts) {
            if (!inRange(c1 + c2) || c1 > in.capacity[t1] ||
                c2 > in.capacity[t2])
              continue;
            CellParts parts{{t1, c1}, {t2, c2}};
            double rate = in.rates->mixedRate(id, parts);
            if (rate > 0)
              result.push_back({parts, rate / best});
          }
    return result;
  }

  std::vector<Assignment> previous;
};
} // namespace

std::unique_ptr<Policy> sched::createWeft() {
  return std::make_unique<WeftPolicy>();
}
