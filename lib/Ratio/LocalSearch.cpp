//===- LocalSearch.cpp - Improve integer sizes by unit moves --------------===//

#include "LocalSearch.h"
#include "weft/Ratio/Objective.h"
#include "llvm/ADT/SmallVector.h"
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

  Totals(const RatioProblem &p, const IntegerPlan &plan) : p(p) {
    for (unsigned s = 0; s < p.segments.size(); ++s) {
      int64_t unit = plan.units[s];
      units.push_back(p.segments[s].extent / unit);
      total.emplace_back();
      for (unsigned c = 0; c < p.classes.size(); ++c) {
        int64_t sum = 0;
        for (int64_t size : plan.sizes[s][c])
          sum += size / unit;
        total.back().push_back(sum);
      }
    }
  }

  std::pair<Ratios, Ratios> shares() const {
    Ratios high(p.segments.size()), low(p.segments.size());
    for (unsigned s = 0; s < p.segments.size(); ++s) {
      double perUnit = 1.0 / units[s];
      for (unsigned c = 0; c < p.classes.size(); ++c) {
        int64_t n = p.classes[c].count, t = total[s][c];
        high[s].push_back((t + n - 1) / n * perUnit);
        low[s].push_back(t / n * perUnit);
      }
    }
    return {high, low};
  }

  /// Cost of the current totals, infinite when over memory.
  double cost() const {
    auto [high, low] = shares();
    for (unsigned c = 0; c < p.memory.size(); ++c)
      if (evaluateMemory(p, c, high, low) > p.classes[c].memoryCapacity)
        return INFINITY;
    return evaluateSteps(p, high, low).total;
  }

  /// Σ over classes of the memory beyond capacity, relative to capacity
  /// (0: every class fits).
  double overflow() const {
    auto [high, low] = shares();
    double out = 0;
    for (unsigned c = 0; c < p.memory.size(); ++c) {
      double cap = p.classes[c].memoryCapacity;
      double need = evaluateMemory(p, c, high, low);
      if (need > cap)
        out += (need - cap) / std::max(cap, 1.0);
    }
    return out;
  }

  /// The unit counts a move of segment s from class a to class b tries:
  /// one unit and what reaches the next level of either class (a plateau
  /// breaker); with `doubling` also whole levels of a doubling up to what a
  /// holds (long walks, as a repair needs).
  llvm::SmallVector<int64_t, 16> moveSizes(unsigned s, unsigned a, unsigned b,
                                           bool doubling) const {
    int64_t na = p.classes[a].count, nb = p.classes[b].count;
    int64_t ra = total[s][a] % na, rb = total[s][b] % nb;
    llvm::SmallVector<int64_t, 16> ks{1, ra, nb - rb, na, nb};
    if (doubling)
      for (int64_t k = 2 * na; k <= total[s][a]; k *= 2)
        ks.push_back(k);
    for (int64_t &k : ks)
      k = std::min(k, total[s][a]);
    return ks;
  }

  void move(unsigned s, unsigned a, unsigned b, int64_t k) {
    total[s][a] -= k;
    total[s][b] += k;
  }

  /// Writes the totals back as device sizes.
  void writeTo(IntegerPlan &plan) const {
    for (unsigned s = 0; s < p.segments.size(); ++s)
      for (unsigned c = 0; c < p.classes.size(); ++c) {
        int64_t n = p.classes[c].count, t = total[s][c];
        std::vector<int64_t> &sizes = plan.sizes[s][c];
        for (int64_t i = 0; i < n; ++i)
          sizes[i] = (t / n + (i < t % n)) * plan.units[s];
      }
  }
};
} // namespace

/// Steepest descent over unit moves of `t`: each step takes the move that
/// lowers `score` the most (strictly), until none does or after `maxMoves`
/// moves; returns the final score.
template <typename Score>
static double descend(Totals &t, Score score, unsigned maxMoves,
                      bool doubling) {
  const RatioProblem &p = t.p;
  double best = score();
  unsigned numClasses = p.classes.size();
  for (unsigned moves = 0; moves < maxMoves; ++moves) {
    double bestScore = best;
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
          for (int64_t k : t.moveSizes(s, a, b, doubling)) {
            if (k <= 0)
              continue;
            t.move(s, a, b, k);
            double value = score();
            t.move(s, b, a, k);
            if (value < bestScore * (1 - 1e-12)) {
              bestScore = value;
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
    t.move(bestS, bestA, bestB, bestK);
    best = bestScore;
  }
  return best;
}

double weft::ratio::improveLocally(const RatioProblem &p, IntegerPlan &plan,
                                   unsigned maxMoves) {
  Totals t(p, plan);
  double best = descend(
      t, [&] { return t.cost(); }, maxMoves,
      /*doubling=*/false);
  t.writeTo(plan);
  return best;
}

double weft::ratio::repairMemory(const RatioProblem &p, IntegerPlan &plan,
                                 unsigned maxMoves) {
  Totals t(p, plan);
  // A plan that fits scores 0 and no move lowers it further.
  double over = descend(
      t, [&] { return t.overflow(); }, maxMoves,
      /*doubling=*/true);
  t.writeTo(plan);
  return over;
}
