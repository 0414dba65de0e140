//===- IntegerizeTest.cpp - Integer shard sizes and their Z3 check --------===//
//
// Expected sizes and costs are derived in the comments above each test.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/Integerize.h"
#include "TestProblems.h"
#include "weft/Ratio/Objective.h"
#include <cmath>
#include <numeric>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

/// Σ over steps and classes of |coef| (per unit of B): a bound on how much the
/// objective moves when every share moves by at most one unit of B.
double shareLipschitz(const RatioProblem &p) {
  double total = 0;
  for (const Step &step : p.steps) {
    double perStep = 0;
    for (const StepClassCost &cost : step.perClass) {
      for (const RatioTerm &t : cost.compute.terms)
        perStep += std::abs(t.coef);
      for (const RatioTerm &t : cost.comm.terms)
        perStep += std::abs(t.coef);
      for (const auto *list : {&cost.computeMax, &cost.commMax})
        for (const MaxCost &m : *list)
          for (const LinearCost &piece : m.pieces)
            for (const RatioTerm &t : piece.terms)
              perStep += m.scale * std::abs(t.coef);
    }
    total += step.multiplicity * perStep;
  }
  return total;
}

/// Three classes (1, 2, 3 devices; speeds 4, 2, 1), two steps with
/// constants and a padded all-gather, segment extent 768 aligned to 64.
RatioProblem threeClassProblem() {
  RatioProblem p = makeProblem({1, 2, 3}, 768, 64);
  std::vector<double> speed = {4, 2, 1};
  addStep(p, 2);
  addStep(p);
  Step &a = p.steps[0], &b = p.steps[1];
  for (unsigned c = 0; c < 3; ++c) {
    a.perClass[c].compute = linear(0.01, 0, c, 1 / speed[c]);
    b.perClass[c].compute = linear(0, 0, c, 0.5 / speed[c]);
    b.perClass[c].commMax.push_back(paddedAllGather(p, 0, 0.01, 1));
  }
  return p;
}

void expectValidSizes(const RatioProblem &p, const IntegerPlan &plan,
                      const IntegerizeOptions &options) {
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    int64_t unit = alignmentUnit(p.segments[s], options);
    int64_t sum = 0;
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      const auto &sizes = plan.sizes[s][c];
      ASSERT_EQ(sizes.size(), p.classes[c].count);
      for (int64_t size : sizes) {
        EXPECT_GE(size, 0);
        EXPECT_EQ(size % unit, 0) << "size " << size << " unit " << unit;
        sum += size;
      }
      auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
      EXPECT_LE(*hi - *lo, unit);
    }
    EXPECT_EQ(sum, p.segments[s].extent);
  }
}

// 768 / 64 = 12 units over 1 + 2 + 3 devices: every device a multiple of 64,
// the class spread at most one unit, the total 768. The integer cost cannot
// beat the LP (it is a point of the LP's feasible set, read conservatively)
// and is no worse than the largest-remainder rounding, which moves each share
// by less than one unit (64/768) from the LP's.
TEST(Integerize, SizesSumToExtentsAndRespectAlignment) {
  RatioProblem p = threeClassProblem();
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  IntegerizeOptions options;
  auto plan = integerize(p, *sol, options);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  expectValidSizes(p, *plan, options);
  EXPECT_TRUE(plan->provedOptimal);
  EXPECT_NEAR(plan->continuousCost, sol->objectiveSeconds, 1e-9);
  EXPECT_GE(plan->integerCost, plan->continuousCost - 1e-9);
  EXPECT_LE(plan->integerCost, plan->roundedCost + 1e-12);
  EXPECT_LE(plan->roundedCost,
            plan->continuousCost + shareLipschitz(p) * 64.0 / 768);
  EXPECT_EQ(messageOf(checkIntegerPlan(p, *plan, options)), "");
}

// With extent 2^20 and unit 1 the rounding error per share is 2^-20: the
// integer cost is within shareLipschitz·2^-20 of the LP.
TEST(Integerize, FineExtentsAreCloseToTheLp) {
  RatioProblem p = threeClassProblem();
  p.segments[0].extent = 1 << 20;
  p.segments[0].alignment = 1;
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  auto plan = integerize(p, *sol);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  expectValidSizes(p, *plan, {});
  EXPECT_GE(plan->integerCost, plan->continuousCost - 1e-9);
  EXPECT_LE(plan->integerCost,
            plan->continuousCost + shareLipschitz(p) / double(1 << 20));
}

// lcm(64, 128) = 128 divides 768: unit 128. lcm(64, 512) = 512 does not
// divide 768: the segment keeps its own 64. lcm(64, 96) = 192 divides 768.
TEST(Integerize, AlignOptionCombinesWithSegmentAlignment) {
  Segment seg{"hidden", 768, 64, std::nullopt};
  EXPECT_EQ(alignmentUnit(seg, {128}), 128);
  EXPECT_EQ(alignmentUnit(seg, {512}), 64);
  EXPECT_EQ(alignmentUnit(seg, {96}), 192);
  EXPECT_EQ(alignmentUnit(seg, {1}), 64);

  RatioProblem p = threeClassProblem();
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  IntegerizeOptions options{128};
  auto plan = integerize(p, *sol, options);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  expectValidSizes(p, *plan, options);
  for (const auto &cls : plan->sizes[0])
    for (int64_t size : cls)
      EXPECT_EQ(size % 128, 0);
}

// Two devices, compute B_0 and 1.6·B_1, extent 4. LP: B_0 = 1.6/2.6 ≈ 0.615,
// 2.46 units, which rounds to 2: max(2/4, 1.6·2/4) = 0.8. Three units give
// max(3/4, 1.6/4) = 0.75, the integer optimum (0 units: 1.6; 1 unit:
// max(0.25, 1.2) = 1.2; 4 units: max(1, 0) = 1).
TEST(Integerize, OptimisesBeyondRounding) {
  RatioProblem p = makeProblem({1, 1}, 4, 1);
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1);
  step.perClass[1].compute = linear(0, 0, 1, 1.6);
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  EXPECT_NEAR(sol->ratios[0][0], 1.6 / 2.6, 1e-9);
  auto plan = integerize(p, *sol);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_EQ(plan->sizes[0][0], std::vector<int64_t>{3});
  EXPECT_EQ(plan->sizes[0][1], std::vector<int64_t>{1});
  EXPECT_NEAR(plan->roundedCost, 0.8, 1e-12);
  EXPECT_NEAR(plan->integerCost, 0.75, 1e-12);
}

// Class 1 has 3 devices, extent 10 units of 32; the single class-0 device is
// 3× as fast. 10 − n_0 units over 3 slow devices cannot be even unless
// 3 | 10 − n_0, so the class may mix sizes; they differ by at most one unit.
TEST(Integerize, DevicesOfAClassDifferByAtMostOneUnit) {
  RatioProblem p = makeProblem({1, 3}, 10 * 32, 32);
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1.0 / 3);
  step.perClass[1].compute = linear(0, 0, 1, 1);
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  // LP: B_0/3 = B_1 and B_0 + 3·B_1 = 1: B_0 = 1/2, B_1 = 1/6, i.e. 5 units
  // on the fast device and 5/3 units per slow one.
  EXPECT_NEAR(sol->ratios[0][0], 0.5, 1e-9);
  auto plan = integerize(p, *sol);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  expectValidSizes(p, *plan, {});
  // Integer optimum: the slow class holds 10 − n_0 units over 3 devices, its
  // largest device ceil((10 − n_0)/3) units; time max(n_0/3, ceil(...))/10.
  // n_0 = 4: max(4/3, 2) = 2; n_0 = 5: max(5/3, 2) = 2; n_0 = 6: max(2, 2) = 2;
  // n_0 = 7: max(7/3, 1) = 7/3. So the optimum is 2 units of time: 0.2.
  EXPECT_NEAR(plan->integerCost, 0.2, 1e-12);
  int64_t slowTotal = 0;
  for (int64_t size : plan->sizes[0][1])
    slowTotal += size;
  EXPECT_EQ(plan->sizes[0][0][0] + slowTotal, 320);

  // One class of 3 devices and 10 units: q = 3, one device holds 4 units.
  RatioProblem single = makeProblem({3}, 10 * 32, 32);
  addStep(single).perClass[0].compute = linear(0, 0, 0, 1);
  auto singleSol = solveRatios(single);
  ASSERT_TRUE(bool(singleSol));
  auto singlePlan = integerize(single, *singleSol);
  ASSERT_TRUE(bool(singlePlan)) << messageOf(singlePlan.takeError());
  std::vector<int64_t> sizes = singlePlan->sizes[0][0];
  llvm::sort(sizes);
  EXPECT_EQ(sizes, (std::vector<int64_t>{96, 96, 128}));
  EXPECT_NEAR(singlePlan->integerCost, 0.4, 1e-12);
}

// A resource limit too small for Z3 to finish returns the incumbent (the
// largest-remainder rounding), valid but not proved optimal.
TEST(Integerize, ResourceLimitKeepsTheIncumbent) {
  RatioProblem p = threeClassProblem();
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  IntegerizeOptions options;
  options.resourceLimit = 1;
  auto plan = integerize(p, *sol, options);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_FALSE(plan->provedOptimal);
  EXPECT_DOUBLE_EQ(plan->integerCost, plan->roundedCost);
  expectValidSizes(p, *plan, options);
}

/// Two classes of one device on one segment of `extent` units: class c
/// needs 100 bytes per share of memory against `capacity[c]` and computes
/// for `speed[c]` seconds per share.
RatioProblem memoryProblem(int64_t extent, std::array<double, 2> capacity,
                           std::array<double, 2> speed) {
  RatioProblem p = makeProblem({1, 1}, extent, 1);
  p.classes[0].memoryCapacity = capacity[0];
  p.classes[1].memoryCapacity = capacity[1];
  p.memory = {linear(0, 0, 0, 100), linear(0, 0, 1, 100)};
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, speed[0]);
  step.perClass[1].compute = linear(0, 0, 1, speed[1]);
  return p;
}

// Memory 100·B_1 ≤ 30 caps class 1 at 0.3 of extent 9: 2.7 units. Rounding
// gives it 3 (remainder 0.7 beats 0.3), 3/9 > 0.3: over memory. Z3 must give
// it 2 units (2/9 ≤ 0.3), cost max(7/9, 0.1·2/9) = 7/9.
TEST(Integerize, RespectsMemoryWhereRoundingDoesNot) {
  RatioProblem p = memoryProblem(9, {100, 30}, {1, 0.1});
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  auto plan = integerize(p, *sol);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_TRUE(std::isinf(plan->roundedCost));
  EXPECT_EQ(plan->sizes[0][0], std::vector<int64_t>{7});
  EXPECT_EQ(plan->sizes[0][1], std::vector<int64_t>{2});
  EXPECT_NEAR(plan->integerCost, 7.0 / 9, 1e-12);
}

// The same problem with a resource limit too small for Z3: the rounding (3
// units on class 1) is over memory, so it is repaired against memory (one
// unit back to class 0) instead of giving up.
TEST(Integerize, ResourceLimitRepairsARoundingOverMemory) {
  RatioProblem p = memoryProblem(9, {100, 30}, {1, 0.1});
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  IntegerizeOptions options;
  options.resourceLimit = 1;
  auto plan = integerize(p, *sol, options);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_FALSE(plan->provedOptimal);
  EXPECT_EQ(plan->sizes[0][0], std::vector<int64_t>{7});
  EXPECT_EQ(plan->sizes[0][1], std::vector<int64_t>{2});
  expectValidSizes(p, *plan, options);
}

// With the resource limit and no sizes in memory at all, the repair falls
// short too: a memory shortfall (exit 2) naming a class, never exit 4.
TEST(Integerize, ResourceLimitWithNoSizesInMemoryIsAShortfall) {
  RatioProblem p = memoryProblem(5, {75, 30}, {1, 1});
  p.classes[0].name = "wide";
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  IntegerizeOptions options;
  options.resourceLimit = 1;
  auto plan = integerize(p, *sol, options);
  ASSERT_FALSE(bool(plan));
  auto [code, message] = codeAndMessage(plan.takeError());
  EXPECT_EQ(code, ExitInfeasible);
  EXPECT_NE(message.find("device class '"), std::string::npos) << message;
}

// Extent 5: memory lets class 0 hold ≤ 3 units (4/5 > 0.75) and class 1 ≤ 1
// unit (2/5 > 0.3): 4 < 5, no integer sizes, though the LP is feasible
// (0.75 + 0.3 ≥ 1). Without class 0's row, 4 + 1 units fit: it is named.
TEST(Integerize, NoIntegerSizesInMemoryIsInfeasible) {
  RatioProblem p = memoryProblem(5, {75, 30}, {1, 1});
  p.classes[0].name = "wide";
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  auto plan = integerize(p, *sol);
  ASSERT_FALSE(bool(plan));
  auto [code, message] = codeAndMessage(plan.takeError());
  EXPECT_EQ(code, ExitInfeasible);
  EXPECT_NE(message.find("'wide'"), std::string::npos) << message;
}

// Fixed ratios (0.5, 0.5) on extent 10: 5 and 5 whatever the speeds.
TEST(Integerize, FixedRatiosStayWithinAUnit) {
  RatioProblem p = makeProblem({1, 1}, 10, 1);
  p.segments[0].fixedRatios = std::vector<double>{0.5, 0.5};
  Step &step = addStep(p);
  step.perClass[0].compute = linear(0, 0, 0, 1);
  step.perClass[1].compute = linear(0, 0, 1, 5);
  auto sol = solveRatios(p);
  ASSERT_TRUE(bool(sol));
  auto plan = integerize(p, *sol);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_EQ(plan->sizes[0][0], std::vector<int64_t>{5});
  EXPECT_EQ(plan->sizes[0][1], std::vector<int64_t>{5});
}

// A valid plan passes; each broken copy fails with exit code 3 and names the
// violated constraint.
TEST(CheckIntegerPlan, CatchesBrokenPlans) {
  RatioProblem p = makeProblem({1, 2}, 768, 64);
  p.classes[1].name = "slow";
  p.classes[1].memoryCapacity = 1000;
  p.memory = {linear(0, 0, 0, 100), linear(0, 0, 1, 3000)};
  IntegerPlan valid;
  valid.sizes = {{{256}, {256, 256}}};
  ASSERT_EQ(messageOf(checkIntegerPlan(p, valid)), "");

  struct Broken {
    const char *name;
    std::vector<std::vector<int64_t>> sizes;
    const char *expected;
  };
  std::vector<Broken> cases = {
      {"misaligned", {{288}, {224, 256}}, "not a multiple of the alignment 64"},
      {"sum", {{320}, {256, 256}}, "sum to 832, expected the extent 768"},
      {"spread", {{256}, {384, 128}}, "more than one alignment unit"},
      {"negative", {{-64}, {448, 384}}, "expected >= 0"},
      // 3000·320/768 = 1250 bytes > 1000.
      {"memory", {{128}, {320, 320}}, "class 'slow' need 1.25 kB"},
      {"shape", {{256}, {512}}, "which has 2 devices"},
  };
  for (const Broken &b : cases) {
    IntegerPlan plan;
    plan.sizes = {b.sizes};
    auto [code, message] = codeAndMessage(checkIntegerPlan(p, plan));
    EXPECT_EQ(code, ExitVerifyFailed) << b.name;
    EXPECT_NE(message.find(b.expected), std::string::npos)
        << b.name << ": " << message;
  }
}

// Sizes are checked once per distinct value of a class: the sum counts
// every device holding it, and a broken value is reported at the first
// device holding it.
TEST(CheckIntegerPlan, DistinctSizesOfAManyDeviceClass) {
  RatioProblem p = makeProblem({1, 6}, 768, 64);
  IntegerPlan valid;
  valid.sizes = {{{128}, {128, 64, 128, 128, 64, 128}}};
  ASSERT_EQ(messageOf(checkIntegerPlan(p, valid)), "");
  IntegerPlan sum;
  sum.sizes = {{{128}, {128, 128, 128, 128, 64, 128}}};
  EXPECT_NE(messageOf(checkIntegerPlan(p, sum))
                .find("sum to 832, expected the extent 768"),
            std::string::npos);
  IntegerPlan misaligned;
  misaligned.sizes = {{{128}, {128, 64, 96, 128, 96, 64}}};
  EXPECT_NE(
      messageOf(checkIntegerPlan(p, misaligned)).find("device 2 of class"),
      std::string::npos);
}

} // namespace
