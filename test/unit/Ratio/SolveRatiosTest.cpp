//===- SolveRatiosTest.cpp - The ratio LP on hand-derived cases -----------===//
//
// Every expected value is derived in the comment above its test.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/SolveRatios.h"
#include "TestProblems.h"
#include "weft/Ratio/Objective.h"
#include <array>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

/// One compute-bound step of `work` seconds on a speed-1 device: a device of
/// class c computes its share B in work·B/speed_c.
RatioProblem speedProblem(std::vector<unsigned> counts,
                          std::vector<double> speeds, double work) {
  RatioProblem p = makeProblem(counts);
  Step &step = addStep(p);
  for (unsigned c = 0; c < counts.size(); ++c)
    step.perClass[c].compute = linear(0, 0, c, work / speeds[c]);
  return p;
}

// Speeds 2:1, one device each, W = 6 s: times 3·B_f and 6·B_s; the max is
// least where they are equal, 3·B_f = 6·B_s with B_f + B_s = 1, so
// B_f = 2/3, B_s = 1/3 (ratios ∝ speed) and the step takes 3·2/3 = 2 s.
TEST(SolveRatios, ComputeBoundRatiosFollowSpeed) {
  auto sol = solveRatios(speedProblem({1, 1}, {2, 1}, 6));
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][0], 2.0 / 3, 1e-9);
  EXPECT_NEAR(sol->ratios[0][1], 1.0 / 3, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 2.0, 1e-9);
}

// Same speeds with 2 fast and 4 slow devices: 2·B_f + 4·B_s = 1 and
// B_f = 2·B_s give 8·B_s = 1: B_s = 1/8, B_f = 1/4, time 3·1/4 = 0.75 s.
TEST(SolveRatios, ClassRatioCountsOncePerDevice) {
  auto sol = solveRatios(speedProblem({2, 4}, {2, 1}, 6));
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][0], 0.25, 1e-9);
  EXPECT_NEAR(sol->ratios[0][1], 0.125, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 0.75, 1e-9);
}

// Class a computes in B_a s, class b in 0.5 + B_b s (a fixed overhead).
// With the constant: B_a = 0.5 + B_b and B_a + B_b = 1 give B_a = 0.75,
// objective 0.75 s. Dropping it (HAP) equalises B_a = B_b = 0.5, whose true
// time is max(0.5, 0.5 + 0.5) = 1 s: the slow device becomes the maximum.
TEST(SolveRatios, ConstantsStayInTheRows) {
  RatioProblem p = makeProblem({1, 1});
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1);
  step.perClass[1].compute = linear(0.5, 0, 1, 1);
  auto withConstants = solveRatios(p);
  ASSERT_TRUE(bool(withConstants)) << messageOf(withConstants.takeError());
  EXPECT_NEAR(withConstants->ratios[0][0], 0.75, 1e-9);
  EXPECT_NEAR(withConstants->objectiveSeconds, 0.75, 1e-9);

  RatioProblem dropped = p;
  dropped.steps[0].perClass[1].compute.constant = 0;
  auto withoutConstants = solveRatios(dropped);
  ASSERT_TRUE(bool(withoutConstants));
  EXPECT_NEAR(withoutConstants->ratios[0][0], 0.5, 1e-9);
  double trueTime = evaluateObjective(p, withoutConstants->ratios);
  EXPECT_NEAR(trueTime, 1.0, 1e-9);
  EXPECT_GT(trueTime, withConstants->objectiveSeconds + 0.2);
}

// Compute 0.5·B_f and B_s plus a padded all-gather of the segment:
// a·max(B_f, B_s) on every device (n = 2, scale a = L/bw). With x = B_f:
// on [1/2, 2/3] the objective is (1 − x) + a·x; below 1/2 it is
// (1 + a)(1 − x) (decreasing); above 2/3 it is x/2 + a·x (increasing).
// a = 2: (a − 1) > 0, so x = 1/2 and the objective is 1/2 + 1 = 1.5.
// a = 0.5: decreasing, x = 2/3, objective 1/3 + 1/3 = 2/3.
TEST(SolveRatios, PaddedAllGatherEpigraph) {
  for (auto [a, x, objective] :
       {std::tuple{2.0, 0.5, 1.5}, std::tuple{0.5, 2.0 / 3, 2.0 / 3}}) {
    RatioProblem p = makeProblem({1, 1});
    Step &step = addStep(p);
    step.perClass[0].compute = linear(0, 0, 0, 0.5);
    step.perClass[1].compute = linear(0, 0, 1, 1);
    // scale = (n − 1)·bytes/bandwidth = a with bytes = a, bandwidth = 1.
    MaxCost gather = paddedAllGather(p, 0, a, 1);
    EXPECT_DOUBLE_EQ(gather.scale, a);
    step.perClass[0].commMax.push_back(gather);
    step.perClass[1].commMax.push_back(gather);
    auto sol = solveRatios(p);
    ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
    EXPECT_NEAR(sol->ratios[0][0], x, 1e-9) << "a = " << a;
    EXPECT_NEAR(sol->objectiveSeconds, objective, 1e-9) << "a = " << a;
    EXPECT_NEAR(sol->stepComm[0], a * x, 1e-9);
  }
}

// Two nodes of 4 devices: node A (class 0, NIC 1 B/s), node B (class 1,
// NIC 3 B/s); a collective brings L = 8 bytes to each node minus what it
// holds. With y = 4·B_0 (node A's share), A receives (1 − y)·8/1 and B
// receives y·8/3; equal when 3(1 − y) = y: y = 3/4, B_0 = 3/16,
// B_1 = 1/16, time 8/4 = 2 s.
TEST(SolveRatios, NicLoadRows) {
  RatioProblem p = makeProblem({4, 4});
  p.nodes.push_back({"nodeA", {{0u, 4u}}, 1.0});
  p.nodes.push_back({"nodeB", {{1u, 4u}}, 3.0});
  Step &step = addStep(p);
  for (unsigned c = 0; c < 2; ++c)
    step.perClass[c].nicLoads.push_back({0, 8.0});
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][0], 3.0 / 16, 1e-9);
  EXPECT_NEAR(sol->ratios[0][1], 1.0 / 16, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 2.0, 1e-9);
}

// A node holding both classes (2 + 2 devices, NIC 1 B/s) and one of class 1
// only (4 devices, NIC 1 B/s), L = 1: the mixed node receives
// 1 − 2·B_0 − 2·B_1, the other 1 − 4·B_1, with 2·B_0 + 6·B_1 = 1.
// Class 0 only sits in the mixed node; class 1 sees the worse of its two
// nodes. Substituting 2·B_0 = 1 − 6·B_1: mixed = 4·B_1, other = 1 − 4·B_1;
// the max is least at B_1 = 1/8 (time 1/2), B_0 = (1 − 3/4)/2 = 1/8.
TEST(SolveRatios, NicLoadOfMixedNode) {
  RatioProblem p = makeProblem({2, 6});
  p.nodes.push_back({"mixed", {{0u, 2u}, {1u, 2u}}, 1.0});
  p.nodes.push_back({"plain", {{1u, 4u}}, 1.0});
  Step &step = addStep(p);
  for (unsigned c = 0; c < 2; ++c)
    step.perClass[c].nicLoads.push_back({0, 1.0});
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][1], 1.0 / 8, 1e-9);
  EXPECT_NEAR(sol->ratios[0][0], 1.0 / 8, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 0.5, 1e-9);
}

/// Two one-device classes, each computing B_c, with these names, capacities
/// and memory rows: the message of the LP's infeasibility error (empty, with
/// a failure, when it is not infeasible).
std::string infeasibleMemoryMessage(std::array<const char *, 2> names,
                                    std::array<double, 2> capacities,
                                    std::vector<LinearCost> memory) {
  RatioProblem p = makeProblem({1, 1});
  for (unsigned c = 0; c < 2; ++c) {
    p.classes[c].name = names[c];
    p.classes[c].memoryCapacity = capacities[c];
  }
  p.memory = std::move(memory);
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1);
  step.perClass[1].compute = linear(0, 0, 1, 1);
  auto sol = solveRatios(p);
  EXPECT_FALSE(bool(sol));
  if (sol)
    return "";
  auto [code, message] = codeAndMessage(sol.takeError());
  EXPECT_EQ(code, ExitInfeasible);
  return message;
}

// Class "small" needs 10 bytes whatever it holds and has 8.
TEST(SolveRatios, MemoryInfeasibleNamesTheClass) {
  std::string message = infeasibleMemoryMessage(
      {"big", "small"}, {100, 8}, {linear(10, 0, 0, 50), linear(10, 0, 1, 0)});
  EXPECT_NE(message.find("'small'"), std::string::npos) << message;
  EXPECT_EQ(message.find("'big'"), std::string::npos) << message;
}

// Memory 100·B_c on capacities 30 and 20: no ratios fit. The ratios closest
// to fitting overflow both classes by the same factor, 2 (B = 0.6, 0.4), and
// class "a" lacks the most: 60 bytes of 30. (Minimising the sum of the
// relative overflows instead would put everything on "a": 100 bytes.)
TEST(SolveRatios, MemoryInfeasibleIsTheLeastLargestOverflow) {
  std::string message = infeasibleMemoryMessage(
      {"a", "b"}, {30, 20}, {linear(0, 0, 0, 100), linear(0, 0, 1, 100)});
  EXPECT_NE(message.find("still need 2.00x"), std::string::npos) << message;
  EXPECT_NE(message.find("class 'a' (1 devices) lacks the most"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("needs 60"), std::string::npos) << message;
}

// Compute B_0 on class 0 and 0.1·B_1 on class 1 would put 10/11 on class 1,
// but its memory 100·B_1 ≤ 30 caps B_1 at 0.3: B_0 = 0.7, time 0.7 s.
TEST(SolveRatios, MemoryRowBinds) {
  RatioProblem p = makeProblem({1, 1});
  p.classes[0].memoryCapacity = 100;
  p.classes[1].memoryCapacity = 30;
  p.memory = {linear(0, 0, 0, 100), linear(0, 0, 1, 100)};
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1);
  step.perClass[1].compute = linear(0, 0, 1, 0.1);
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][1], 0.3, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 0.7, 1e-9);
}

/// Two steps X (compute-bound, speeds 2:1) and Y (a fixed 0.25 s overhead on
/// class 1 plus its share).
void addStepX(RatioProblem &p, double mult) {
  Step &x = addStep(p, mult);
  x.perClass[0].compute = linear(0, 0, 0, 1);
  // 1·B split in two terms: the same function as 2·B.
  x.perClass[1].compute = linear(0, 0, 1, 1);
  x.perClass[1].compute.terms.push_back({0, 1, 1});
}
void addStepY(RatioProblem &p) {
  Step &y = addStep(p);
  y.perClass[0].compute = linear(0, 0, 0, 1);
  y.perClass[1].compute = linear(0.25, 0, 1, 1);
}

// X three times plus Y equals X with multiplicity 3 plus Y: the optimum
// minimises 3·max(B_0, 2·B_1) + max(B_0, 0.25 + B_1). At B_0 = 2/3 the first
// term is 2 and the second 2/3 (0.25 + 1/3 < 2/3): moving away raises the
// first by 3·(slope ≥ 1) and lowers the second by at most 1, so 2/3 is
// optimal with objective 3·2/3 + 2/3 = 8/3.
TEST(SolveRatios, IdenticalStepsCollapse) {
  RatioProblem repeated = makeProblem({1, 1});
  for (int i = 0; i < 3; ++i)
    addStepX(repeated, 1);
  addStepY(repeated);
  RatioProblem weighted = makeProblem({1, 1});
  addStepX(weighted, 3);
  addStepY(weighted);

  auto a = solveRatios(repeated);
  auto b = solveRatios(weighted);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->numDistinctSteps, 2u);
  EXPECT_EQ(b->numDistinctSteps, 2u);
  EXPECT_EQ(a->stepCompute.size(), 4u);
  EXPECT_NEAR(a->objectiveSeconds, 8.0 / 3, 1e-9);
  EXPECT_NEAR(b->objectiveSeconds, 8.0 / 3, 1e-9);
  EXPECT_NEAR(a->ratios[0][0], 2.0 / 3, 1e-9);
  EXPECT_NEAR(b->ratios[0][0], 2.0 / 3, 1e-9);
  EXPECT_NEAR(evaluateObjective(repeated, a->ratios), a->objectiveSeconds,
              1e-9);
  EXPECT_EQ(a->numRows, b->numRows);
}

// Solving again inside a trust region around the LP's own optimum returns the
// same ratios (the optimum is unique: 2/3, 1/3).
TEST(SolveRatios, IdempotentFromItsOwnSolution) {
  RatioProblem p = speedProblem({1, 1}, {2, 1}, 6);
  auto first = solveRatios(p);
  ASSERT_TRUE(bool(first));
  for (double radius : {0.0, 0.01, 0.3}) {
    LpOptions options;
    options.trustRegion = TrustRegion{first->ratios, radius};
    auto again = solveRatios(p, options);
    ASSERT_TRUE(bool(again)) << messageOf(again.takeError());
    EXPECT_NEAR(again->ratios[0][0], first->ratios[0][0], 1e-9);
    EXPECT_NEAR(again->ratios[0][1], first->ratios[0][1], 1e-9);
    EXPECT_NEAR(again->objectiveSeconds, first->objectiveSeconds, 1e-9);
  }
}

// Trust region around (0.5, 0.5) with radius 0.05 stops B_f at 0.55 short of
// 2/3: time max(3·0.55, 6·0.45) = 2.7 s.
TEST(SolveRatios, TrustRegionBoundsRatios) {
  RatioProblem p = speedProblem({1, 1}, {2, 1}, 6);
  LpOptions options;
  options.trustRegion = TrustRegion{{{0.5, 0.5}}, 0.05};
  auto sol = solveRatios(p, options);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][0], 0.55, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 2.7, 1e-9);
}

TEST(SolveRatios, TrustRegionThatExcludesSumOneIsBadInput) {
  RatioProblem p = speedProblem({1, 1}, {2, 1}, 6);
  LpOptions options;
  options.trustRegion = TrustRegion{{{0.1, 0.1}}, 0.05};
  auto sol = solveRatios(p, options);
  ASSERT_FALSE(bool(sol));
  auto [code, message] = codeAndMessage(sol.takeError());
  EXPECT_EQ(code, ExitBadInput);
  EXPECT_NE(message.find("excludes 1"), std::string::npos) << message;
}

// Fixed ratios are kept as given even when another split would be faster.
TEST(SolveRatios, FixedRatiosAreKept) {
  RatioProblem p = speedProblem({1, 1}, {2, 1}, 6);
  p.segments[0].fixedRatios = std::vector<double>{0.5, 0.5};
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_DOUBLE_EQ(sol->ratios[0][0], 0.5);
  EXPECT_NEAR(sol->objectiveSeconds, 3.0, 1e-9);
}

// Roofline: class 0 takes max(1·B, 0.3) (memory-bound floor), class 1 takes
// 2·B. At B_0 = 2/3 the flops piece dominates (2/3 > 0.3) and both take
// 2/3 s; the constant floor does not bind.
TEST(SolveRatios, RooflineMaxOnCompute) {
  RatioProblem p = makeProblem({1, 1});
  Step &step = addStep(p);
  MaxCost roofline;
  roofline.pieces.push_back(linear(0, 0, 0, 1));
  roofline.pieces.push_back(linear(0.3, 0, 0, 0));
  step.perClass[0].computeMax.push_back(roofline);
  step.perClass[1].compute = linear(0, 0, 1, 2);
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->ratios[0][0], 2.0 / 3, 1e-9);
  EXPECT_NEAR(sol->objectiveSeconds, 2.0 / 3, 1e-9);
}

} // namespace
