//===- SynthMemoTest.cpp - The memo, budgets and synthesize() -------------===//
//
// The memoised search on repeated blocks against the plain search, how the
// searches stop within a budget (the memo giving up, plainFirst, a hopeless
// A* stopped early), and synthesize() with its default budget: a plan that
// replays, the same plan on every run.
//
//===----------------------------------------------------------------------===//

#include "../Eval/EvalTestUtil.h"
#include "SynthTestUtil.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::synth;
using namespace weft::test;
using namespace weft::synth::test;

namespace {

TEST(SynthTest, MemoMatchesPlainSearch) {
  for (unsigned devices : {1u, 2u}) {
    ClusterSpec spec = cluster(2, devices);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(4), spec);
    ASSERT_TRUE(parsed.space) << parsed.error;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome plain = search(*space, limits);
    limits.memo = true;
    SearchOutcome memo = search(*space, limits);
    ASSERT_TRUE(plain.found && memo.found);
    EXPECT_TRUE(memo.memoised);
    EXPECT_NEAR(memo.cost, plain.cost, 1e-12 * plain.cost);
    auto replayed = replay(*space, memo.choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, memo.cost, 1e-12 * plain.cost);
  }
}

/// Residual blocks with three parallel matmuls summed: four live values
/// inside a block, so one block solve takes many expansions.
std::string wideBlocks(unsigned blocks) {
  std::string params, body;
  std::string cur = "%x";
  const char *t = "tensor<8x16xf32>";
  for (unsigned i = 0; i < blocks; ++i) {
    for (unsigned j = 0; j < 3; ++j) {
      params += llvm::formatv("    %w{0}_{1} = graph.parameter \"w{0}_{1}\" : "
                              "tensor<16x16xf32>\n",
                              i, j);
      body += llvm::formatv("    %a{0}_{1} = graph.matmul {2}, %w{0}_{1} : "
                            "({3}, tensor<16x16xf32>) -> {3}\n",
                            i, j, cur, t);
    }
    body += llvm::formatv(
        "    %s{0} = graph.add %a{0}_0, %a{0}_1 : ({1}, {1}) -> {1}\n"
        "    %t{0} = graph.add %s{0}, %a{0}_2 : ({1}, {1}) -> {1}\n"
        "    %r{0} = graph.relu %t{0} : {1}\n"
        "    %h{0} = graph.add {2}, %r{0} : ({1}, {1}) -> {1}\n",
        i, t, cur);
    cur = "%h" + std::to_string(i);
  }
  return residualModule(params, body, cur);
}

TEST(SynthTest, MemoGivesUpWhenOneSolveOutrunsItsShare) {
  // With stopWhenHopeless the memoised search stops as soon as one block
  // solve takes more than twice its share of the expansions left (shared
  // by the entries its cut still has to solve); the plain A* takes over
  // and the plan stays a plan of the space at its replayed cost.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, wideBlocks(3), spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = true;
  // A generous budget: the memo finishes with the rule as without it.
  limits.maxExpansions = 8000000;
  limits.stopWhenHopeless = true;
  SearchOutcome roomy = search(space, limits);
  ASSERT_TRUE(roomy.found);
  EXPECT_TRUE(roomy.memoised);
  // A budget whose eighth the memo cannot finish in: with the rule it
  // stops before that eighth is spent; without it (the same memo budget:
  // half of a quarter) it runs to the end of its budget.
  uint64_t cap = 8 * roomy.memoExpansions / 3;
  limits.maxExpansions = cap;
  SearchOutcome with = search(space, limits);
  limits.maxExpansions = cap / 4;
  limits.stopWhenHopeless = false;
  SearchOutcome without = search(space, limits);
  EXPECT_FALSE(without.memoised);
  EXPECT_LT(with.memoExpansions, cap / 8);
  EXPECT_LT(with.memoExpansions, without.memoExpansions);
  ASSERT_TRUE(without.found && with.found);
  EXPECT_FALSE(with.memoised);
  for (const SearchOutcome *o : {&roomy, &with}) {
    auto replayed = replay(space, o->choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, o->cost, 1e-12 * o->cost);
  }
  EXPECT_GE(with.cost, roomy.cost * (1 - 1e-12));
}

TEST(SynthTest, PlainFirstSkipsTheMemoWhenTheAStarCloses) {
  // plainFirst (the default budget): the plain A* tries first on the memo's
  // eighth of the expansions. On 24 blocks on 2 x 2 the admissible A*
  // closes there, so no block is solved and the cost is the memo's; uniform
  // cost stops as hopeless there, and the memo then finishes the search.
  mlir::MLIRContext ctx;
  // One sync per tensor: the search landscape these counts were read on.
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(24), cluster(2, 2),
                                  /*recompute=*/false, /*bucketBytes=*/0.0);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = true;
  limits.maxExpansions = 400000;
  limits.stopWhenHopeless = true;
  SearchOutcome memo = search(space, limits);
  ASSERT_TRUE(memo.memoised);
  limits.plainFirst = true;
  SearchOutcome plain = search(space, limits);
  EXPECT_FALSE(plain.capped);
  EXPECT_FALSE(plain.memoised);
  EXPECT_EQ(plain.memoExpansions, 0u);
  EXPECT_NEAR(plain.cost, memo.cost, 1e-12 * memo.cost);
  limits.admissible = false;
  SearchOutcome uniform = search(space, limits);
  EXPECT_TRUE(uniform.memoised);
  EXPECT_GT(uniform.memoExpansions, 0u);
  EXPECT_GT(uniform.expansions, uniform.memoExpansions);
  EXPECT_NEAR(uniform.cost, memo.cost, 1e-12 * memo.cost);
}

TEST(SynthTest, DefaultBudgetReturnsAPlan) {
  // 24 blocks on a 2 x 2 mesh: far beyond exhaustive search (the space has
  // about 10^40 choice sequences). Without limits synthesize() applies its
  // default budget and still returns a plan (capped or not) that replays.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, repeatedBlocks(24));
  ASSERT_TRUE(graph);
  SynthOptions options;
  options.fixedRatios = true;
  options.memo = false;
  auto result = synthesize(*graph, spec, options);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(result->plan);
  EXPECT_LE(result->stats.expansions, kDefaultMaxExpansions);
  EXPECT_GE(result->stats.gap, 0);
  EXPECT_LT(result->stats.gap, 1);
  // A budget of a few expansions still yields the seed's plan, capped.
  auto space = SearchSpace::build(*graph, spec, {});
  ASSERT_TRUE(bool(space));
  SearchLimits limits;
  limits.memo = false;
  limits.maxExpansions = 3;
  SearchOutcome tiny = search(**space, limits);
  ASSERT_TRUE(tiny.found);
  EXPECT_TRUE(tiny.capped);
  auto replayed = replay(**space, tiny.choices);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_NEAR(*replayed, tiny.cost, 1e-9 * tiny.cost);
  // The data-parallel seed exists on its own.
  EXPECT_TRUE(dataParallelSeed(**space, false).has_value());
}

TEST(SynthTest, DeterministicAndBuildsAVerifiedPlan) {
  ClusterSpec spec = cluster(2, 2);
  std::vector<std::string> printed;
  double cost = -1;
  for (int run = 0; run < 2; ++run) {
    mlir::MLIRContext ctx;
    auto graph = parsePlan(ctx, repeatedBlocks(2));
    ASSERT_TRUE(graph);
    SynthOptions options;
    options.fixedRatios = true;
    auto result = synthesize(*graph, spec, options);
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    ASSERT_TRUE(result->plan);
    std::string s;
    llvm::raw_string_ostream os(s);
    result->plan->print(os);
    printed.push_back(os.str());
    if (cost >= 0)
      EXPECT_EQ(result->searchStepSeconds, cost);
    cost = result->searchStepSeconds;
    EXPECT_GT(result->evaluatedStepSeconds, 0);
    EXPECT_EQ(result->explain.size(), 11u);
  }
  EXPECT_EQ(printed[0], printed[1]);
}

} // namespace

TEST(SynthTest, HopelessSearchStopsEarlyAndClosableOneFinishes) {
  // stopWhenHopeless stops the A* once its bound, rising four times as fast
  // as over its last doubling, would not reach the incumbent within the
  // cap; a search whose bound closes is left to finish. Uniform cost on 6
  // blocks on a 2 x 2 mesh closes in about 20,000 expansions (past the
  // probes at 2,048, 4,096, 8,192 and 16,384) of a cap of 30,000, close
  // enough that the rule without its margin (the rise once, not four
  // times over) would stop it; on 24 blocks it would take about 133,000.
  mlir::MLIRContext ctx;
  {
    // One sync per tensor: the search landscape these counts were read on.
    ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(6), cluster(2, 2),
                                    /*recompute=*/false, /*bucketBytes=*/0.0);
    ASSERT_TRUE(parsed.space) << parsed.error;
    SearchLimits limits;
    limits.memo = false;
    limits.admissible = false;
    limits.maxExpansions = 30000;
    SearchOutcome optimum = search(*parsed.space, limits);
    ASSERT_FALSE(optimum.capped);
    ASSERT_GT(optimum.expansions, 16384u);
    limits.stopWhenHopeless = true;
    SearchOutcome closed = search(*parsed.space, limits);
    EXPECT_FALSE(closed.hopeless);
    EXPECT_FALSE(closed.capped);
    EXPECT_EQ(closed.expansions, optimum.expansions);
    EXPECT_NEAR(closed.cost, optimum.cost, 1e-12 * optimum.cost);
  }
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(24), cluster(2, 2),
                                  /*recompute=*/false, /*bucketBytes=*/0.0);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = false;
  limits.maxExpansions = 400000;
  SearchOutcome optimum = search(space, limits);
  ASSERT_FALSE(optimum.capped);

  // Uniform cost with a cap of 40,000: its bound rises about 1e-8 s per
  // expansion, far short of the 1.4e-3 s plan by the cap.
  limits.admissible = false;
  limits.maxExpansions = 40000;
  limits.stopWhenHopeless = false;
  SearchOutcome capped = search(space, limits);
  EXPECT_TRUE(capped.capped);
  EXPECT_FALSE(capped.hopeless);
  limits.stopWhenHopeless = true;
  SearchOutcome stopped = search(space, limits);
  EXPECT_TRUE(stopped.hopeless);
  EXPECT_TRUE(stopped.capped);
  EXPECT_LT(stopped.expansions, capped.expansions);
  ASSERT_TRUE(stopped.found);
  EXPECT_GE(stopped.cost, optimum.cost * (1 - 1e-12));
  EXPECT_GT(stopped.gap, 0);
  auto replayed = replay(space, stopped.choices);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_NEAR(*replayed, stopped.cost, 1e-9 * stopped.cost);
}
