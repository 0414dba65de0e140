//===- LinearizeTest.cpp - All-to-all linearised inside a trust region ----===//

#include "weft/Ratio/Linearize.h"
#include "TestProblems.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/SolveRatios.h"
#include <cmath>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

// The tangent pieces equal the bilinear cost at the center, and their max is
// within the second-order remainder |dx·dy|·bytes/bandwidth nearby:
// x(1 − y) − tangent = −(x − x0)(y − y0).
TEST(Linearize, AllToAllTangentIsExactAtCenter) {
  RatioProblem p = makeProblem({1, 1});
  p.segments.push_back({"s1", 1 << 20, 1, std::nullopt});
  Ratios center = {{0.7, 0.3}, {0.2, 0.8}};
  MaxCost cost = linearizeAllToAll(0, 1, 0, 8, 2, center);
  LinearCost zero;
  auto at = [&](double x, double y) {
    Ratios r = {{x, 1 - x}, {y, 1 - y}};
    // Evaluate the max term through a one-step problem.
    RatioProblem q = p;
    q.steps.clear();
    addStep(q).perClass[0].commMax.push_back(cost);
    return evaluateObjective(q, r);
  };
  // Send 0.7·0.8 = 0.56, receive 0.2·0.3 = 0.06: 0.56·8/2 = 2.24 s.
  EXPECT_NEAR(allToAllSeconds(0.7, 0.2, 8, 2), 2.24, 1e-12);
  EXPECT_NEAR(at(0.7, 0.2), 2.24, 1e-12);
  double dx = 0.01, dy = -0.02;
  EXPECT_NEAR(at(0.7 + dx, 0.2 + dy), allToAllSeconds(0.7 + dx, 0.2 + dy, 8, 2),
              std::abs(dx * dy) * 8 / 2 + 1e-12);
}

/// Step A computes segment 0 (class 0 twice as fast), step B segment 1
/// (class 1 twice as fast), step C moves the tensor from Gather(s0) to
/// Gather(s1) with an all_to_all of 2 bytes at 1 byte/s.
double trueObjective(double x0, double x1) {
  double a = std::max(0.5 * x0, 1 - x0);
  double b = std::max(x1, 0.5 * (1 - x1));
  // Both devices see max(x0·(1 − x1), x1·(1 − x0)).
  double c = 2 * std::max(x0 * (1 - x1), x1 * (1 - x0));
  return a + b + c;
}

RatioProblem linearisedProblem(const Ratios &center) {
  RatioProblem p = makeProblem({1, 1});
  p.segments.push_back({"s1", 1 << 20, 1, std::nullopt});
  Step &a = addStep(p);
  a.perClass[0].compute = linear(0, 0, 0, 0.5);
  a.perClass[1].compute = linear(0, 0, 1, 1);
  Step &b = addStep(p);
  b.perClass[0].compute = linear(0, 1, 0, 1);
  b.perClass[1].compute = linear(0, 1, 1, 0.5);
  Step &c = addStep(p);
  for (unsigned cls = 0; cls < 2; ++cls)
    c.perClass[cls].commMax.push_back(
        linearizeAllToAll(0, 1, cls, 2, 1, center));
  return p;
}

// Sequential LP: re-linearise at the accepted ratios, halve the trust region
// when the true cost does not improve. It must reach the minimum of a
// 1e-3 grid over (x0, x1) of the true (bilinear) objective within the grid's
// resolution (the objective's slopes sum to at most 1 + 1 + 2·2).
// Without step C the optimum is (2/3, 1/3), true cost 1/3 + 1/3 + 2·4/9 =
// 14/9; C pulls the two splits together: at x0 = x1 = 1/3 (or 2/3) the cost
// is 2/3 + 1/3 + 2·2/9 = 13/9.
TEST(Linearize, TrustRegionIterationReachesGridOptimum) {
  Ratios center = {{0.5, 0.5}, {0.5, 0.5}};
  double current = trueObjective(0.5, 0.5);
  double radius = 0.25;
  for (int iter = 0; iter < 200 && radius > 1e-7; ++iter) {
    LpOptions options;
    options.trustRegion = TrustRegion{center, radius};
    auto sol = solveRatios(linearisedProblem(center), options);
    ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
    for (unsigned s = 0; s < 2; ++s)
      for (unsigned c = 0; c < 2; ++c)
        EXPECT_LE(std::abs(sol->ratios[s][c] - center[s][c]), radius + 1e-9);
    double next = trueObjective(sol->ratios[0][0], sol->ratios[1][0]);
    if (next < current - 1e-12) {
      current = next;
      center = sol->ratios;
    } else {
      radius /= 2;
    }
  }
  double grid = INFINITY;
  for (int i = 0; i <= 1000; ++i)
    for (int j = 0; j <= 1000; ++j)
      grid = std::min(grid, trueObjective(i * 1e-3, j * 1e-3));
  EXPECT_LE(current, grid + 1e-9);
  EXPECT_GE(current, grid - 6 * 1e-3);
  EXPECT_NEAR(center[0][0], center[1][0], 1e-6);
  EXPECT_NEAR(current, 13.0 / 9, 1e-6);
}

} // namespace
