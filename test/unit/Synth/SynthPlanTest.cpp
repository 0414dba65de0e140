//===- SynthPlanTest.cpp - Options, memory, seeds, improvement ------------===//
//
// What the search space offers and what plans it yields: recipe
// all-reduces priced as communication, one list of options for ops alike,
// memory pruning keeping the only plan that fits (and naming the device
// when none does), the tensor-parallel seed, and improvePlan reaching a
// local optimum within memory, repeated blocks improved together.
//
//===----------------------------------------------------------------------===//

#include "../Eval/EvalTestUtil.h"
#include "BlockClasses.h"
#include "Graph/IR/GraphOps.h"
#include "SynthTestUtil.h"
#include "weft/Support/Error.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::synth;
using namespace weft::test;
using namespace weft::synth::test;

namespace {

/// One 4096 x 4096 weight: 64 MiB of fp32, 256 MiB with Adam's state and
/// gradient (16 B per parameter).
const char *kBigWeight = R"(module {
  func.func @main(%x: tensor<8x4096xf32> {graph.input = "x"}) -> tensor<f32> {
    %w = graph.parameter "w" : tensor<4096x4096xf32>
    %m = graph.matmul %x, %w : (tensor<8x4096xf32>, tensor<4096x4096xf32>) -> tensor<8x4096xf32>
    %l = graph.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x4096xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})";

/// A softmax over 100 classes of a value that carries a gradient.
const char *kSoftmax = R"(module {
  func.func @main(%x: tensor<8x100xf32> {graph.input = "x"}) -> tensor<f32> {
    %w = graph.parameter "w" : tensor<8x100xf32>
    %z = graph.add %x, %w : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
    %s = graph.softmax %z {axis = 1 : i64} : tensor<8x100xf32>
    %l = graph.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x100xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})";

TEST(SynthTest, RecipeAllReducesAreCommunication) {
  // Two nodes of one device: a softmax split along its classes all-reduces
  // the row maximum and row sum (8 fp32 values, 32 B) and, backward, Σ dy·y:
  // three 2-device ring all-reduces of 2·(10 us + 16 B / 1e9 B/s) each, as
  // the evaluator prices them (EvaluatorTest.RecipeAllReducesArePriced).
  ClusterSpec spec = cluster(2, 1);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kSoftmax, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  unsigned splitClasses = 0;
  for (const OpInfo &op : s.ops) {
    if (!llvm::isa<graph::SoftmaxOp>(op.op))
      continue;
    for (const OpOption &o : op.options) {
      auto axes = s.dist(o.operands[0]).getAxes();
      bool classes = axes[0].isGather() && axes[0].dim == 1;
      splitClasses += classes;
      for (double t : o.recipeComm)
        EXPECT_NEAR(t, classes ? 3 * 2.0032e-5 : 0, 1e-15);
    }
  }
  EXPECT_EQ(splitClasses, 1u);
}

TEST(SynthTest, MemoryPruningKeepsTheOnlyFeasiblePlan) {
  // 0.25 GB per device (0.225 after the reserve): replication (0.27 GB) does
  // not fit; a weight split 2 : 1 over the devices (0.18 GB on the fast one)
  // does.
  ClusterSpec spec = cluster(2, 1, 0.25);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  BruteForce brute{*space};
  double want = brute.solve();
  ASSERT_TRUE(std::isfinite(want));
  for (bool memo : {false, true}) {
    SearchLimits limits;
    limits.memo = memo;
    SearchOutcome a = search(*space, limits);
    ASSERT_TRUE(a.found);
    EXPECT_NEAR(a.cost, want, 1e-12 * want);
    for (unsigned r = 0; r < space->numReps(); ++r)
      EXPECT_LE(a.peakMemory[r], space->capacity()[r]);
  }
  // Without memory the search prefers something that does not fit here.
  SearchLimits relaxed;
  relaxed.memoryPruning = false;
  SearchOutcome free = search(*space, relaxed);
  ASSERT_TRUE(free.found);
  EXPECT_LE(free.cost, want);
}

/// The least cost over single-position changes of `plan` (the suffix kept),
/// by brute force with replay(); infinity when none is possible.
double bestSingleChange(SearchSpace &space, const SearchOutcome &plan) {
  double best = std::numeric_limits<double>::infinity();
  for (unsigned p = 0; p < space.numPositions(); ++p)
    space.forEachChoice(p, [&](const StepChoice &c) {
      if (c == plan.choices[p])
        return;
      std::vector<StepChoice> changed = plan.choices;
      changed[p] = c;
      RepVector peak;
      auto cost = replay(space, changed, nullptr, &peak);
      if (!cost)
        return;
      for (unsigned r = 0; r < space.numReps(); ++r)
        if (peak[r] > space.capacity()[r])
          return;
      best = std::min(best, *cost);
    });
  return best;
}

TEST(SynthTest, ImprovePlanReachesALocalOptimumWithinMemory) {
  // Every seed of random chains, improved: never worse, never below the
  // optimum, replays to its cost within memory, and no single change
  // (brute force) is cheaper.
  std::mt19937 rng(13);
  ClusterSpec specs[] = {cluster(3, 1), cluster(2, 2)};
  unsigned checked = 0, improved = 0;
  for (unsigned trial = 0; trial < 40; ++trial) {
    std::string text = randomGraph(rng, 4 + rng() % 4);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, specs[trial % 2]);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    SearchSpace &s = *space;
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome optimum = searchAStar(s, limits);
    ASSERT_FALSE(optimum.capped);
    for (SearchOutcome seed : seedPlans(s)) {
      double before = seed.cost;
      EXPECT_GT(improvePlan(s, seed), 0u);
      ++checked;
      improved += seed.cost < before * (1 - 1e-9);
      EXPECT_LE(seed.cost, before) << text;
      EXPECT_GE(seed.cost, optimum.cost * (1 - 1e-12)) << text;
      RepVector peak;
      auto replayed = replay(s, seed.choices, nullptr, &peak);
      ASSERT_TRUE(replayed.has_value()) << text;
      EXPECT_NEAR(*replayed, seed.cost, 1e-12 * before) << text;
      for (unsigned r = 0; r < s.numReps(); ++r) {
        EXPECT_LE(peak[r], s.capacity()[r]) << text;
        EXPECT_DOUBLE_EQ(seed.peakMemory[r], peak[r]) << text;
      }
      EXPECT_GE(bestSingleChange(s, seed), seed.cost * (1 - 1e-9)) << text;
    }
  }
  EXPECT_GE(checked, 100u);
  // The seeds are often not local optima, so the test sees changes.
  EXPECT_GE(improved, 20u);
}

TEST(SynthTest, ImprovePlanStaysWithinMemory) {
  // The big weight fits only split (MemoryPruningKeepsTheOnlyFeasiblePlan):
  // from the least-memory seed the improvement stays within memory, between
  // the optimum and the seed; a plan over memory is left as it is.
  ClusterSpec spec = cluster(2, 1, 0.25);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  BruteForce brute{s};
  double want = brute.solve();
  auto seed = leastMemorySeed(s);
  ASSERT_TRUE(seed.has_value());
  double before = seed->cost;
  improvePlan(s, *seed);
  EXPECT_GE(seed->cost, want * (1 - 1e-12));
  EXPECT_LE(seed->cost, before);
  for (unsigned r = 0; r < s.numReps(); ++r)
    EXPECT_LE(seed->peakMemory[r], s.capacity()[r]);
  // The replicated data-parallel plan does not fit: nothing to improve
  // within memory, though ignoring memory a change is found or not.
  auto over = dataParallelSeed(s, /*minMemory=*/false, /*memoryPruning=*/false);
  ASSERT_TRUE(over.has_value());
  bool overMemory = false;
  for (unsigned r = 0; r < s.numReps(); ++r)
    overMemory |= over->peakMemory[r] > s.capacity()[r];
  ASSERT_TRUE(overMemory);
  SearchOutcome kept = *over;
  improvePlan(s, kept);
  EXPECT_EQ(kept.choices, over->choices);
  EXPECT_EQ(kept.cost, over->cost);
}

TEST(SynthTest, RepeatedBlocksAreFoundAndImprovedTogether) {
  // Six identical residual blocks: the cuts give one class of at least
  // four blocks of one length, whose ops agree offset by offset; every seed,
  // improved (joint sweeps over the first block, then every position), is
  // no worse, replays to its cost and no single change is cheaper.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(6), spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &s = *parsed.space;
  std::vector<RepeatedBlocks> classes = synth::repeatedBlocks(s);
  ASSERT_FALSE(classes.empty());
  const RepeatedBlocks *most = &classes.front();
  for (const RepeatedBlocks &c : classes)
    if (c.starts.size() > most->starts.size())
      most = &c;
  EXPECT_GE(most->starts.size(), 4u);
  for (size_t k = 1; k < most->starts.size(); ++k) {
    EXPECT_GE(most->starts[k], most->starts[k - 1] + most->length);
    for (unsigned o = 0; o < most->length; ++o)
      EXPECT_EQ(s.ops[most->starts[k] + o].op->getName(),
                s.ops[most->starts[0] + o].op->getName());
  }
  unsigned improved = 0;
  for (SearchOutcome seed : seedPlans(s)) {
    double before = seed.cost;
    improvePlan(s, seed);
    improved += seed.cost < before * (1 - 1e-9);
    EXPECT_LE(seed.cost, before);
    auto replayed = replay(s, seed.choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, seed.cost, 1e-12 * before);
    EXPECT_GE(bestSingleChange(s, seed), seed.cost * (1 - 1e-9));
  }
  EXPECT_GE(improved, 1u);
}

TEST(SynthTest, OpsAlikeShareOptionsAndOthersDoNot) {
  // Two matmuls of one shape (%a, %b) take one list of options; the third
  // (%c, same name and attributes, four times the FLOPs) has its own: were
  // types left out of what makes ops alike, it would copy %a's compute.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, R"(module {
  func.func @main(%x: tensor<8x16xf32> {graph.input = "x"}) -> tensor<f32> {
    %w1 = graph.parameter "w1" : tensor<16x32xf32>
    %w2 = graph.parameter "w2" : tensor<16x32xf32>
    %w3 = graph.parameter "w3" : tensor<32x64xf32>
    %a = graph.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %b = graph.matmul %x, %w2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %s = graph.add %a, %b : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %c = graph.matmul %s, %w3 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
    %l = graph.reduce_sum %c {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x64xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})",
                                  spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &s = *parsed.space;
  std::vector<const OpInfo *> matmuls;
  for (const OpInfo &info : s.ops)
    if (llvm::isa<graph::MatMulOp>(info.op))
      matmuls.push_back(&info);
  ASSERT_EQ(matmuls.size(), 3u);
  const OpInfo &a = *matmuls[0], &b = *matmuls[1], &c = *matmuls[2];
  ASSERT_EQ(a.options.size(), b.options.size());
  for (auto [x, y] : llvm::zip(a.options, b.options)) {
    EXPECT_EQ(x.operands, y.operands);
    EXPECT_EQ(x.results, y.results);
    EXPECT_EQ(x.compute, y.compute);
    EXPECT_EQ(x.kept, y.kept);
  }
  // The replicated option computes the whole matmul on every device.
  auto replicated = [&](const OpInfo &info) {
    for (const OpOption &o : info.options)
      if (llvm::all_of(o.perAxis, [&](uint16_t v) {
            return llvm::StringRef(info.variantNames[v]).endswith(".replicate");
          }))
        return o.compute;
    return std::vector<double>();
  };
  std::vector<double> ra = replicated(a), rc = replicated(c);
  ASSERT_FALSE(ra.empty());
  ASSERT_EQ(ra.size(), rc.size());
  for (auto [x, y] : llvm::zip(ra, rc))
    EXPECT_GT(y, 2 * x);
}

TEST(SynthTest, TensorParallelSeedSplitsParametersInsideNodes) {
  // Two nodes of two devices: the seed keeps the batch split across nodes
  // and splits the weight along the local axis; its choices replay to its
  // cost. On one device per node there is no local axis and no such seed.
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  auto seed = tensorParallelSeed(s);
  ASSERT_TRUE(seed.has_value());
  auto cost = replay(s, seed->choices);
  ASSERT_TRUE(cost.has_value());
  EXPECT_NEAR(*cost, seed->cost, 1e-12 * seed->cost);
  bool weightSplitLocally = false, batchSplitAcrossNodes = false;
  for (auto [p, choice] : llvm::enumerate(seed->choices)) {
    const OpInfo &op = s.ops[p];
    const OpOption &o = op.options[choice.option];
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      if (o.operands[i] == kNoDist)
        continue;
      auto axes = s.dist(o.operands[i]).getAxes();
      if (s.values[v].kind == ValueInfo::Kind::Parameter)
        weightSplitLocally |= !axes[1].isIdentity();
      if (s.values[v].kind == ValueInfo::Kind::Input)
        batchSplitAcrossNodes |= axes[0].isGather() && axes[0].dim == 0;
    }
  }
  EXPECT_TRUE(weightSplitLocally);
  EXPECT_TRUE(batchSplitAcrossNodes);
  EXPECT_EQ(seedPlans(s).size(), 4u);

  ClusterSpec flat = cluster(2, 1);
  auto flatSpace = SearchSpace::build(*parsed.graph, flat, {});
  ASSERT_TRUE(bool(flatSpace));
  EXPECT_FALSE(tensorParallelSeed(**flatSpace).has_value());
}

TEST(SynthTest, NoPlanFitsNamesTheDevice) {
  ClusterSpec spec = cluster(2, 1, 0.05);
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kBigWeight);
  ASSERT_TRUE(graph);
  SynthOptions options;
  auto result = synthesize(*graph, spec, options);
  ASSERT_FALSE(bool(result));
  std::string message;
  int code = 0;
  llvm::handleAllErrors(result.takeError(), [&](const WeftError &e) {
    message = e.getMessage();
    code = e.getCode();
  });
  EXPECT_EQ(code, ExitInfeasible);
  EXPECT_NE(message.find("lacks"), std::string::npos) << message;
}

} // namespace
