//===- LocalSearch.cpp - Improve integer sizes by unit moves --------------===//

#include "LocalSearch.h"
#include "weft/Ratio/Objective.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Class totals in alignment units; a class of n devices holding T units
/// gives T mod n devices ceil(T/n) units and the rest floor(T/n).
struct Totals {
  const RatioProblem &p;
  std::vector<int64_t> units; // per segment
  std::vector<std::vector<int64_t>> total;

  /// Cost of the current totals, infinite when over memory.
  double cost() const {
    Ratios high(p.segments.size()), low(p.segments.size());
    for (unsigned s = 0; s < p.segments.size(); ++s) {
      double perUnit = 1.0 / units[s];
      for (unsigned c = 0; c < p.classes.size(); ++c) {
        int64_t n = p.classes[c].count, t = total[s][c];
        high[s].push_back((t + n - 1) / n * perUnit);
        low[s].push_back(t / n * perUnit);
      }
    }
    for (unsigned c = 0; c < p.memory.size(); ++c)
      if (evaluateMemory(p, c, high, low) > p.classes[c].memoryCapacity)
        return INFINITY;
    return evaluateSteps(p, high, low).total;
  }
};
} // namespace

double weft::ratio::improveLocally(const RatioProblem &p, IntegerPlan &plan,
                                   unsigned maxMoves) {
  Totals t{p, {}, {}};
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    int64_t unit = plan.units[s];
    t.units.push_back(p.segments[s].extent / unit);
    t.total.emplace_back();
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      int64_t sum = 0;
      for (int64_t size : plan.sizes[s][c])
        sum += size / unit;
      t.total.back().push_back(sum);
    }
  }
  double best = t.cost();
  unsigned numClasses = p.classes.size();
  for (unsigned moves = 0; moves < maxMoves; ++moves) {
    // The best move of k units of segment s from class a to class b; k
    // reaches the next level of either class (a plateau breaker) or is 1.
    double bestCost = best;
    unsigned bestS = 0, bestA = 0, bestB = 0;
    int64_t bestK = 0;
    for (unsigned s = 0; s < p.segments.size(); ++s) {
      // Fixed ratios are the caller's: their rounding stays.
      if (p.segments[s].fixedRatios)
        continue;
      for (unsigned a = 0; a < numClasses; ++a)
        for (unsigned b = 0; b < numClasses; ++b) {
          if (a == b || t.total[s][a] == 0)
            continue;
          int64_t na = p.classes[a].count, nb = p.classes[b].count;
          int64_t ra = t.total[s][a] % na, rb = t.total[s][b] % nb;
          int64_t ks[] = {1, ra, nb - rb, na, nb};
          for (int64_t k : ks) {
            k = std::min(k, t.total[s][a]);
            if (k <= 0)
              continue;
            t.total[s][a] -= k;
            t.total[s][b] += k;
            double cost = t.cost();
            t.total[s][a] += k;
            t.total[s][b] -= k;
            if (cost < bestCost * (1 - 1e-12)) {
              bestCost = cost;
              bestS = s;
              bestA = a;
              bestB = b;
              bestK = k;
            }
          }
        }
    }
    if (bestK == 0)
      break;
    t.total[bestS][bestA] -= bestK;
    t.total[bestS][bestB] += bestK;
    best = bestCost;
  }
  for (unsigned s = 0; s < p.segments.size(); ++s)
    for (unsigned c = 0; c < numClasses; ++c) {
      int64_t n = p.classes[c].count, total = t.total[s][c];
      std::vector<int64_t> &sizes = plan.sizes[s][c];
      for (int64_t i = 0; i < n; ++i)
        sizes[i] = (total / n + (i < total % n)) * plan.units[s];
    }
  return best;
}
