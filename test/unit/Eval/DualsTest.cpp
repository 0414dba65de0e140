//===- DualsTest.cpp - The dual table and what each dual costs -----------===//

#include "weft/Spmd/Duals.h"
#include "EvalTestUtil.h"
#include "weft/Eval/Evaluator.h"

using namespace weft;
using namespace weft::spmd;
using namespace weft::test;

namespace {

/// One function holding one op of each relayout kind.
std::string relayoutPlan() {
  return std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.5, 0.5], sizes = [32, 32]>,
                   #spmd.segment<id = 1, extent = 16, ratios = [0.5, 0.5], sizes = [8, 8]>]} {
  func.func @main(%x: tensor<64x16xf32>) {
    %s = spmd.shard %x {axis = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[gather(0, 0), id]>
    %t = spmd.all_to_all %s {axis = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[gather(1, 1), id]>
    %g = spmd.all_gather %t {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<64x16xf32> -> #spmd.dist<[id, id]>
    %p = spmd.local (%g) {variant = "partial", dists = [#spmd.dist<[sum, id]>]} : (tensor<64x16xf32>) -> tensor<64x16xf32> {
    ^bb0(%a: tensor<64x16xf32>):
      spmd.yield %a : tensor<64x16xf32>
    }
    %rs = spmd.reduce_scatter %p {axis = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[gather(0, 0), id]>
    %m = spmd.local (%g) {variant = "max", dists = [#spmd.dist<[max, id]>]} : (tensor<64x16xf32>) -> tensor<64x16xf32> {
    ^bb0(%a: tensor<64x16xf32>):
      spmd.yield %a : tensor<64x16xf32>
    }
    %ar = spmd.all_reduce %p {axis = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[id, id]>
    %arm = spmd.all_reduce %m {axis = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[id, id]>
    spmd.send %rs {peer = 1 : i64} : tensor<64x16xf32>
    %rv = spmd.recv {peer = 0 : i64} : tensor<64x16xf32> -> #spmd.dist<[gather(0, 0), id]>
    return
  }
})";
}

/// The dual of the first op named `name` in `module`.
CollectiveDual dualOfFirst(mlir::ModuleOp module, llvm::StringRef name,
                           unsigned skip = 0) {
  std::optional<CollectiveDual> found;
  module.walk([&](mlir::Operation *op) {
    if (!found && op->getName().getStringRef() == name && skip-- == 0)
      found = dualOf(op);
  });
  EXPECT_TRUE(found.has_value()) << name.str();
  return found.value_or(
      CollectiveDual{"", Collective::None, Collective::None, false});
}

TEST(DualsTest, EveryCollectiveHasItsDesignDual) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, relayoutPlan());
  ASSERT_TRUE(module);
  EXPECT_EQ(dualOfFirst(*module, "spmd.shard").backward, Collective::ZeroPad);
  EXPECT_EQ(dualOfFirst(*module, "spmd.all_gather").backward,
            Collective::ReduceScatter);
  EXPECT_EQ(dualOfFirst(*module, "spmd.reduce_scatter").backward,
            Collective::AllGather);
  EXPECT_EQ(dualOfFirst(*module, "spmd.all_reduce").backward,
            Collective::AllReduce);
  // The second all_reduce combines a partial max: a stop-gradient.
  EXPECT_EQ(dualOfFirst(*module, "spmd.all_reduce", 1).backward,
            Collective::None);
  CollectiveDual a2a = dualOfFirst(*module, "spmd.all_to_all");
  EXPECT_EQ(a2a.backward, Collective::AllToAll);
  EXPECT_TRUE(a2a.reversesLayout);
  EXPECT_EQ(dualOfFirst(*module, "spmd.send").backward, Collective::Recv);
  EXPECT_EQ(dualOfFirst(*module, "spmd.recv").backward, Collective::Send);
  EXPECT_FALSE(communicates(Collective::ZeroPad));
  // Non-relayout ops have no row.
  module->walk([&](LocalOp op) { EXPECT_FALSE(dualOf(op).has_value()); });
}

TEST(DualsTest, TableHasOneRowPerRelayoutOp) {
  EXPECT_EQ(collectiveDuals().size(), 7u);
  for (const CollectiveDual &d : collectiveDuals())
    EXPECT_TRUE(d.opName.startswith("spmd.")) << d.opName.str();
}

TEST(DualsTest, StrategyRows) {
  EXPECT_EQ(strategyDuals().size(), 5u);
  const StrategyDual &rep = dualOf(ParamStrategy::Replicated);
  EXPECT_EQ(rep.gradientSync, Collective::AllReduce);
  EXPECT_EQ(rep.afterUpdate, Collective::None);
  const StrategyDual &z1 = dualOf(ParamStrategy::Zero1);
  EXPECT_EQ(z1.gradientSync, Collective::ReduceScatter);
  EXPECT_EQ(z1.afterUpdate, Collective::AllGather);
  EXPECT_TRUE(z1.optimizerSharded);
  EXPECT_FALSE(z1.gradientSharded);
  const StrategyDual &z2 = dualOf(ParamStrategy::Zero2);
  EXPECT_TRUE(z2.optimizerSharded);
  EXPECT_TRUE(z2.gradientSharded);
  const StrategyDual &z3 = dualOf(ParamStrategy::Zero3);
  EXPECT_TRUE(z3.regatherInBackward);
  const StrategyDual &buf = dualOf(ParamStrategy::Buffer);
  EXPECT_FALSE(buf.trainable);
  EXPECT_EQ(buf.gradientSync, Collective::None);
  for (const StrategyDual &s : strategyDuals())
    EXPECT_EQ(parseParamStrategy(toString(s.strategy)), s.strategy);
}

/// A plan with one 1024x256 parameter (1 MiB in fp32) stored as given and
/// used by an all_gather when `gather` is set.
std::string parameterPlan(llvm::StringRef strategy, llvm::StringRef dist,
                          bool gather = false) {
  std::string use =
      gather
          ? R"(%g = spmd.all_gather %w {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<1024x256xf32> -> #spmd.dist<[id, id]>
    %u = spmd.local (%g) {variant = "use", dists = [#spmd.dist<[id, id]>]} : (tensor<1024x256xf32>) -> tensor<1024x256xf32> {
    ^bb0(%a: tensor<1024x256xf32>):
      spmd.yield %a : tensor<1024x256xf32>
    })"
          : "";
  return std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 1024, ratios = [0.5, 0.5], sizes = [512, 512]>]} {
  func.func @main() {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<)" +
         strategy.str() + R"(>} : tensor<1024x256xf32> -> )" + dist.str() +
         "\n    " + use + R"(
    return
  }
})";
}

/// The figures below are worked out one collective per gradient tensor
/// (gradient buckets: EvaluatorTest.GradientSyncInBuckets).
EvalOptions perTensor() {
  EvalOptions options;
  options.gradientBucketBytes = 0;
  return options;
}

PlanEstimate evaluate(const std::string &text,
                      EvalOptions options = perTensor()) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, text);
  if (!module)
    return {};
  ClusterSpec spec = toyCluster();
  auto estimate = evaluatePlan(*module, spec, options);
  if (!estimate) {
    ADD_FAILURE() << llvm::toString(estimate.takeError());
    return {};
  }
  return std::move(*estimate);
}

// 262,144 parameters; the id axes hold 2 devices. fp32 Adam: 4 B weights,
// 4 B gradients, 8 B state per parameter.
constexpr double kParams = 1024 * 256;
// One ring round between the nodes moving B bytes: 1e-5 + B / 1e9 s.
double round(double bytes) { return 1e-5 + bytes / 1e9; }

TEST(StrategyMemoryTest, Replicated) {
  PlanEstimate e =
      evaluate(parameterPlan("replicated", "#spmd.dist<[id, id]>"));
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.parameters, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.gradients, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.optimizerState, 8 * kParams);
  // Gradient all-reduce: 2 rounds of half the 1 MiB gradient.
  EXPECT_NEAR(e.commSeconds, 2 * round(4 * kParams / 2), 1e-12);
}

TEST(StrategyMemoryTest, Zero1ShardsOptimizerState) {
  PlanEstimate e = evaluate(parameterPlan("zero1", "#spmd.dist<[id, id]>"));
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[1].terms.parameters, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[1].terms.gradients, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[1].terms.optimizerState, 8 * kParams / 2);
  // Reduce-scatter of the gradient (one round of a 512 KiB shard) in the
  // step, all-gather of the updated shard (the same) after the optimizer.
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_NEAR(e.steps[0].gradientSyncSeconds, round(4 * kParams / 2), 1e-12);
  EXPECT_NEAR(e.commSeconds, 2 * round(4 * kParams / 2), 1e-12);
}

TEST(StrategyMemoryTest, Zero2ShardsGradientsToo) {
  PlanEstimate e = evaluate(parameterPlan("zero2", "#spmd.dist<[id, id]>"));
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.parameters, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.gradients, 4 * kParams / 2);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.optimizerState, 8 * kParams / 2);
}

TEST(StrategyMemoryTest, Zero3StoresShardAndRegathers) {
  std::string plan =
      parameterPlan("zero3", "#spmd.dist<[gather(0, 0), id]>", true);
  PlanEstimate e = evaluate(plan);
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.parameters, 4 * kParams / 2);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.gradients, 4 * kParams / 2);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.optimizerState, 8 * kParams / 2);
  // The gathered whole parameter is a transient buffer.
  EXPECT_DOUBLE_EQ(e.memory[0].transientBytes, 4 * kParams);
  // all_gather (forward) + all_gather again (backward) + its dual, a
  // reduce_scatter: three rounds of one 512 KiB shard. The id axis (local,
  // size 1) needs no all-reduce.
  double shard = round(4 * kParams / 2);
  EXPECT_NEAR(e.commSeconds, 3 * shard, 1e-12);
  ASSERT_FALSE(e.steps.empty());
  EXPECT_NEAR(e.steps[0].dualSeconds, 2 * shard, 1e-12);

  // Keeping the gathered copy trades the backward gather for memory.
  EvalOptions keep = perTensor();
  keep.keepGatheredParameters = true;
  PlanEstimate k = evaluate(plan, keep);
  EXPECT_NEAR(k.commSeconds, 2 * shard, 1e-12);
  EXPECT_DOUBLE_EQ(k.memory[0].terms.activations, 4 * kParams);
}

TEST(StrategyMemoryTest, TensorParallelShardSyncsOnlyOverIdAxes) {
  // Split on the node axis and used split: no gradient traffic at all (the
  // only id axis, local, has one device).
  PlanEstimate e =
      evaluate(parameterPlan("replicated", "#spmd.dist<[gather(0, 0), id]>"));
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.parameters, 4 * kParams / 2);
  EXPECT_DOUBLE_EQ(e.commSeconds, 0);
}

TEST(StrategyMemoryTest, BufferHasNoGradientOrState) {
  PlanEstimate e = evaluate(parameterPlan("buffer", "#spmd.dist<[id, id]>"));
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.parameters, 4 * kParams);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.gradients, 0);
  EXPECT_DOUBLE_EQ(e.memory[0].terms.optimizerState, 0);
  EXPECT_DOUBLE_EQ(e.commSeconds, 0);
}

TEST(CollectiveCostTest, AllGatherAndItsDual) {
  // x (64x16 fp32, needs no gradient) sharded 32:32 and all-gathered:
  // one round of a 2 KiB shard, no dual.
  std::string plan = std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.5, 0.5], sizes = [32, 32]>]} {
  func.func @main(%x: tensor<64x16xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<buffer>} : tensor<16x16xf32> -> #spmd.dist<[id, id]>
    %g = spmd.all_gather %x {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<64x16xf32> -> #spmd.dist<[id, id]>
    return
  }
})";
  PlanEstimate e = evaluate(plan);
  EXPECT_NEAR(e.commSeconds, round(32 * 16 * 4), 1e-13);
  // The same activation computed from a trainable weight: its gradient
  // comes back through the dual, a reduce-scatter of the same shards.
  std::string trained = std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.5, 0.5], sizes = [32, 32]>]} {
  func.func @main(%x: tensor<64x16xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<16x16xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local (%x, %w) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x16xf32>, tensor<16x16xf32>) -> tensor<64x16xf32> {
    ^bb0(%a: tensor<64x16xf32>, %b: tensor<16x16xf32>):
      %m = graph.matmul %a, %b : (tensor<64x16xf32>, tensor<16x16xf32>) -> tensor<64x16xf32>
      spmd.yield %m : tensor<64x16xf32>
    }
    %g = spmd.all_gather %h {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<64x16xf32> -> #spmd.dist<[id, id]>
    return
  }
})";
  PlanEstimate t = evaluate(trained);
  ASSERT_EQ(t.steps.size(), 2u);
  // Step 1: the matmul and w's gradient all-reduce (2 rounds of 512 B).
  EXPECT_NEAR(t.steps[0].commSeconds, 2 * round(512), 1e-13);
  // Step 2: the all-gather and its dual.
  EXPECT_NEAR(t.steps[1].commSeconds, 2 * round(32 * 16 * 4), 1e-13);
  EXPECT_NEAR(t.steps[1].dualSeconds, round(32 * 16 * 4), 1e-13);
  // The collective itself is listed with its bytes and both directions.
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_EQ(t.collectives[0].op, "spmd.all_gather");
  EXPECT_EQ(t.collectives[0].axis, 0u);
  EXPECT_DOUBLE_EQ(t.collectives[0].bytes, 32 * 16 * 4);
  EXPECT_NEAR(t.collectives[0].forwardSeconds, round(32 * 16 * 4), 1e-13);
  EXPECT_NEAR(t.collectives[0].dualSeconds, round(32 * 16 * 4), 1e-13);
  EXPECT_TRUE(e.collectives.size() == 1 && e.collectives[0].dualSeconds == 0);
}

} // namespace
