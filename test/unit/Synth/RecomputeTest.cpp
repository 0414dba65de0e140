//===- RecomputeTest.cpp - Activation recomputation in the search ---------===//
//
// docs/Synthesis.md "Recomputation": the search's memory of a plan with
// recomputed ops is the evaluator's; A* still equals exhaustive enumeration
// when recomputation is a choice; recomputation makes plans fit that do not
// fit without it.
//
//===----------------------------------------------------------------------===//

#include "SynthTestUtil.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::synth;
using namespace weft::synth::test;

namespace {

/// Peak memory of the exhaustive optimum within memory, or infinity.
double bruteForce(SearchSpace &space, unsigned p, const StateKey &key,
                  const MemoryTally &memory, double g) {
  if (p == space.numPositions()) {
    for (unsigned r = 0; r < space.numReps(); ++r)
      if (memory.peak(r) > space.capacity()[r])
        return std::numeric_limits<double>::infinity();
    return g;
  }
  std::vector<StepChoice> choices;
  space.forEachChoice(p, [&](const StepChoice &c) { choices.push_back(c); });
  double best = std::numeric_limits<double>::infinity();
  for (const StepChoice &c : choices)
    if (auto r = space.step(p, key, c))
      best = std::min(best, bruteForce(space, p + 1, r->next, memory.after(*r),
                                       g + r->cost));
  return best;
}

bool anyRecomputed(const std::vector<StepChoice> &choices) {
  return llvm::any_of(choices, [](const StepChoice &c) { return c.recompute; });
}

TEST(RecomputeTest, SearchMemoryIsTheEvaluators) {
  std::mt19937 rng(11);
  // One node of two like devices: even shards, so the search's sizes at
  // its ratios are the built plan's integer sizes.
  ClusterSpec spec = cluster(1, 2);
  unsigned compared = 0, recomputed = 0, closedRuns = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    std::string text = randomGraph(rng, 4 + rng() % 6);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, spec, /*recompute=*/true);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    SearchSpace &space = *parsed.space;
    // A random plan: a random possible choice at every position.
    std::vector<StepChoice> plan;
    StateKey key;
    bool sawKeepAfterRecompute = false;
    for (unsigned p = 0; p < space.numPositions(); ++p) {
      std::vector<StepChoice> choices;
      space.forEachChoice(p,
                          [&](const StepChoice &c) { choices.push_back(c); });
      std::shuffle(choices.begin(), choices.end(), rng);
      for (const StepChoice &c : choices)
        if (auto r = space.step(p, key, c)) {
          sawKeepAfterRecompute |= anyRecomputed(plan) && !c.recompute;
          plan.push_back(c);
          key = std::move(r->next);
          break;
        }
      ASSERT_EQ(plan.size(), p + 1) << text;
    }
    RepVector peak;
    ASSERT_TRUE(replay(space, plan, nullptr, &peak).has_value());
    auto built = buildPlanOf(space, *parsed.graph, plan);
    ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError()) << text;
    auto estimate = evaluatePlan(**built, spec, {});
    ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
    for (unsigned r = 0; r < space.numReps(); ++r) {
      double eval = estimate->memory[space.repDevices[r]].peakBytes();
      EXPECT_NEAR(peak[r], eval, 1e-9 * eval) << "rep " << r << "\n" << text;
    }
    ++compared;
    recomputed += anyRecomputed(plan);
    closedRuns += sawKeepAfterRecompute;
  }
  EXPECT_EQ(compared, 60u);
  // The plans exercised runs, checkpoints and closed runs.
  EXPECT_GE(recomputed, 40u);
  EXPECT_GE(closedRuns, 20u);
}

TEST(RecomputeTest, AStarEqualsExhaustiveEnumeration) {
  std::mt19937 rng(5);
  // Memory from tight to ample (GB per device before the reserve).
  const double memories[] = {1e-6, 1.4e-6, 2e-6, 3e-6, 16};
  unsigned compared = 0, infeasible = 0, withRecompute = 0;
  for (unsigned trial = 0; trial < 50; ++trial) {
    ClusterSpec spec = cluster(2, 1, memories[trial % 5]);
    std::string text = randomGraph(rng, 2 + rng() % 2);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, spec, /*recompute=*/true);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    SearchSpace &space = *parsed.space;
    double want = bruteForce(space, 0, {}, MemoryTally(space.numReps()), 0);
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome a = searchAStar(space, limits);
    ASSERT_EQ(a.found, std::isfinite(want)) << text;
    if (!a.found) {
      ++infeasible;
      continue;
    }
    ++compared;
    EXPECT_NEAR(a.cost, want, 1e-12 * want) << text;
    withRecompute += anyRecomputed(a.choices);
    for (unsigned r = 0; r < space.numReps(); ++r)
      EXPECT_LE(a.peakMemory[r], space.capacity()[r]) << text;
  }
  EXPECT_GE(compared, 25u);
  EXPECT_GE(infeasible, 3u);
  // Some optima need recomputation to fit.
  EXPECT_GE(withRecompute, 3u);
}

TEST(RecomputeTest, RecomputationMakesPlansFit) {
  std::mt19937 rng(3);
  unsigned rescued = 0;
  for (unsigned trial = 0; trial < 60 && rescued < 5; ++trial) {
    std::string text = randomGraph(rng, 6 + rng() % 4);
    for (double gb : {2e-6, 3e-6, 4e-6, 6e-6, 8e-6}) {
      ClusterSpec spec = cluster(2, 1, gb);
      mlir::MLIRContext ctx;
      ParsedSpace keep = parseSpace(ctx, text, spec, false);
      ParsedSpace both = parseSpace(ctx, text, spec, true);
      ASSERT_TRUE(keep.space && both.space) << keep.error << both.error;
      SearchLimits limits;
      SearchOutcome without = search(*keep.space, limits);
      SearchOutcome with = search(*both.space, limits);
      // Recomputation only adds choices: never worse, never lost.
      if (without.found) {
        ASSERT_TRUE(with.found) << text;
        EXPECT_LE(with.cost, without.cost * (1 + 1e-12)) << text;
      }
      if (!without.found && with.found) {
        EXPECT_TRUE(anyRecomputed(with.choices)) << text;
        for (unsigned r = 0; r < both.space->numReps(); ++r)
          EXPECT_LE(with.peakMemory[r], both.space->capacity()[r]);
        ++rescued;
        break;
      }
    }
  }
  EXPECT_GE(rescued, 5u);
}

/// Four blocks reading one value `%m` made before them (as every layer of
/// GPT reads the causal mask): `%m` stays live to the last block, so cuts()
/// finds its least live set only after it and cuts no block; checkpointCuts()
/// does not count it and cuts at every block boundary.
TEST(RecomputeTest, CheckpointCutsIgnoreAValueEveryBlockReads) {
  std::string body = "    %h0 = graph.matmul %x, %w : (tensor<4x8xf32>, "
                     "tensor<8x8xf32>) -> tensor<4x8xf32>\n"
                     "    %m = graph.relu %x : tensor<4x8xf32>\n";
  for (int k = 1; k <= 4; ++k)
    body +=
        llvm::formatv("    %a{0} = graph.relu %h{1} : tensor<4x8xf32>\n"
                      "    %b{0} = graph.relu %a{0} : tensor<4x8xf32>\n"
                      "    %c{0} = graph.add %b{0}, %a{0} : (tensor<4x8xf32>, "
                      "tensor<4x8xf32>) -> tensor<4x8xf32>\n"
                      "    %h{0} = graph.add %c{0}, %m : (tensor<4x8xf32>, "
                      "tensor<4x8xf32>) -> tensor<4x8xf32>\n",
                      k, k - 1)
            .str();
  std::string text =
      "module {\n  func.func @main(%x: tensor<4x8xf32> {graph.input = "
      "\"x\"}) -> tensor<f32> {\n    %w = graph.parameter \"w\" : "
      "tensor<8x8xf32>\n" +
      body +
      "    %l = graph.reduce_sum %h4 {axes = array<i64: 0, 1>, keepdims = "
      "false} : tensor<4x8xf32> -> tensor<f32>\n    return %l : tensor<f32>\n"
      "  }\n}\n";
  mlir::MLIRContext ctx;
  ParsedSpace ps = parseSpace(ctx, text, cluster(2, 1), true);
  ASSERT_TRUE(ps.space) << ps.error;
  SearchSpace &space = *ps.space;
  ASSERT_EQ(space.numPositions(), 19u);
  // Only the reduce_sum's position (18) holds fewer values than the blocks.
  EXPECT_EQ(space.cuts(0), (std::vector<unsigned>{0, 18, 19}));
  // Without %m: one value live before each block's first op (positions 2,
  // 6, 10, 14), before its second (a kept alive by the add) and before its
  // last; two before each block's first add.
  EXPECT_EQ(space.checkpointCuts(),
            (std::vector<unsigned>{0, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17,
                                   18, 19}));
}

} // namespace
