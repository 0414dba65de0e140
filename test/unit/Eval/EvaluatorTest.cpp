//===- EvaluatorTest.cpp - A 2-layer MLP priced by hand -------------------===//
//
// Every expected number below is derived by hand from the documented
// formulas (docs/CostModel.md, docs/Evaluator.md, GraphCost.h conventions),
// not copied from the program's output.
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/Evaluator.h"
#include "EvalTestUtil.h"
#include "mlir/IR/Builders.h"

using namespace weft;
using namespace weft::test;

namespace {

/// A 2-layer MLP, data parallel over the toy cluster's two nodes with the
/// batch of 64 split 48 (Fast) : 16 (Slow).
std::string mlpPlan() {
  return std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.75, 0.25], sizes = [48, 16]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<64x1024xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>},
                  %y: tensor<64xi64> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) -> tensor<f32> {
    %w1 = spmd.parameter "fc1.weight" {strategy = #spmd.strategy<replicated>} : tensor<1024x256xf32> -> #spmd.dist<[id, id]>
    %w2 = spmd.parameter "fc2.weight" {strategy = #spmd.strategy<replicated>} : tensor<256x10xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local (%x, %w1) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32> {
    ^bb0(%a: tensor<64x1024xf32>, %b: tensor<1024x256xf32>):
      %m = graph.matmul %a, %b : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
      spmd.yield %m : tensor<64x256xf32>
    }
    %r = spmd.local (%h) {variant = "relu.split", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x256xf32>) -> tensor<64x256xf32> {
    ^bb0(%a: tensor<64x256xf32>):
      %m = graph.relu %a : tensor<64x256xf32>
      spmd.yield %m : tensor<64x256xf32>
    }
    %l = spmd.local (%r, %w2) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x256xf32>, tensor<256x10xf32>) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x256xf32>, %b: tensor<256x10xf32>):
      %m = graph.matmul %a, %b : (tensor<64x256xf32>, tensor<256x10xf32>) -> tensor<64x10xf32>
      spmd.yield %m : tensor<64x10xf32>
    }
    %p = spmd.local (%l, %y) {variant = "cross_entropy.split-batch", dists = [#spmd.dist<[sum, id]>]} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<64x10xf32>, %b: tensor<64xi64>):
      %c = graph.cross_entropy %a, %b {reduction = "mean"} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
      spmd.yield %c : tensor<f32>
    }
    %loss = spmd.all_reduce %p {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %loss : tensor<f32>
  }
})";
}

// Compute (FLOP-bound: t = FLOPs / peak; matmul 2MNK forward, 4MNK backward;
// relu 1 + 1 per element; cross-entropy 5 + 4 per logit):
//   matmul 1, Fast (48 rows): 2·48·256·1024 = 25,165,824 fwd + 50,331,648 bwd
//     = 75,497,472 FLOP / 1e13 = 7.5497472e-6 s
//   matmul 1, Slow (16 rows): 25,165,824 FLOP / 5e12 = 5.0331648e-6 s
//   relu:  Fast 2·48·256 = 24,576 / 1e13 = 2.4576e-9 s (Slow 1.6384e-9)
//   matmul 2: Fast 6·48·10·256 = 737,280 / 1e13 = 7.3728e-8 s (Slow 4.9152e-8)
//   cross-entropy: Fast 9·480 = 4,320 / 1e13 = 4.32e-10 s (Slow 2.88e-10)
//   Σ of the step maxima (all Fast) = 7.6263648e-6 s
constexpr double kCompute = 7.6263648e-6;
// Communication (α = 10 us between nodes, 1e9 B/s NICs; a 2-device ring
// all-reduce of L bytes is 2 rounds of L/2: 2·(1e-5 + L/2/1e9)):
//   fc1.weight gradient, L = 1024·256·4 = 1,048,576 B: 2·(1e-5 + 5.24288e-4)
//     = 1.068576e-3 s one tensor at a time, charged to step 1
//   fc2.weight gradient, L = 10,240 B: 2·(1e-5 + 5.12e-6) = 3.024e-5 s,
//     charged to step 3
//   loss all_reduce, L = 4 B, and its dual: 2 · 2·(1e-5 + 2e-9) = 4.0008e-5 s
constexpr double kSyncW1PerTensor = 1.068576e-3, kSyncW2PerTensor = 3.024e-5,
                 kLoss = 4.0008e-5;
// In buckets of S = 25 MiB = 26,214,400 B (the default) a gradient pays
// L/S of a bucket's 2e-5 s latency and all its bandwidth term L/1e9:
//   fc1: 0.04 · 2e-5 + 1.048576e-3 = 1.049376e-3 s
//   fc2: 3.90625e-4 · 2e-5 + 1.024e-5 = 1.02478125e-5 s
constexpr double kSyncW1 = 1.049376e-3, kSyncW2 = 1.02478125e-5;
// Optimizer (Adam, fp32): 264,704 parameters on every device, 12 FLOP each
// = 3,176,448 FLOP; the slow device takes 3,176,448 / 5e12 = 6.352896e-7 s
// (28 B per parameter at 1e15 B/s is far less).
constexpr double kOptimizer = 6.352896e-7;

TEST(EvaluatorTest, TwoLayerMlpStepTimeByHand) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, mlpPlan());
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto estimate = evaluatePlan(*module, spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());

  ASSERT_EQ(estimate->steps.size(), 5u);
  EXPECT_NEAR(estimate->steps[0].computeSeconds, 7.5497472e-6, 1e-15);
  EXPECT_NEAR(estimate->steps[0].commSeconds, kSyncW1, 1e-12);
  EXPECT_NEAR(estimate->steps[0].gradientSyncSeconds, kSyncW1, 1e-12);
  EXPECT_NEAR(estimate->steps[1].computeSeconds, 2.4576e-9, 1e-17);
  EXPECT_EQ(estimate->steps[1].commSeconds, 0);
  EXPECT_NEAR(estimate->steps[2].computeSeconds, 7.3728e-8, 1e-16);
  EXPECT_NEAR(estimate->steps[2].commSeconds, kSyncW2, 1e-13);
  EXPECT_NEAR(estimate->steps[3].computeSeconds, 4.32e-10, 1e-18);
  EXPECT_NEAR(estimate->steps[4].commSeconds, kLoss, 1e-13);
  EXPECT_NEAR(estimate->steps[4].dualSeconds, kLoss / 2, 1e-13);

  EXPECT_NEAR(estimate->computeSeconds, kCompute, 1e-14);
  EXPECT_NEAR(estimate->commSeconds, kSyncW1 + kSyncW2 + kLoss, 1e-12);
  EXPECT_NEAR(estimate->optimizerSeconds, kOptimizer, 1e-15);
  // 1.1470856544e-3 s.
  double step = kCompute + kSyncW1 + kSyncW2 + kLoss + kOptimizer;
  EXPECT_NEAR(estimate->stepSeconds, step, 1e-12);
  EXPECT_NEAR(estimate->commShare, (kSyncW1 + kSyncW2 + kLoss) / step, 1e-9);
}

// Memory of the fast device (fp32, Adam: 4 + 4 + 8 B per parameter):
//   parameters 264,704 · 4 = 1,058,816 B, gradients the same, Adam state
//   2,117,632 B;
//   kept activations: matmul 1 keeps its operands 48·1024·4 + 1024·256·4
//   = 1,245,184; relu its result 48·256·4 = 49,152; matmul 2 its operands
//   49,152 + 10,240 = 59,392; cross-entropy its logits 48·10·4 = 1,920:
//   1,355,648 B;
//   largest transient: the 48x256 activation, 49,152 B.
//   Peak = 1,058,816·2 + 2,117,632 + 1,355,648 + 49,152 = 5,640,064 B.
// Gradient buckets (docs/CostModel.md "Gradient buckets"): 0 prices one
// collective per tensor; a gradient larger than a bucket pays a whole
// collective; the bandwidth terms are the same whatever the bucket.
TEST(EvaluatorTest, GradientSyncInBuckets) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, mlpPlan());
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto syncOf = [&](double bucketBytes) {
    EvalOptions options;
    options.gradientBucketBytes = bucketBytes;
    auto e = evaluatePlan(*module, spec, options);
    EXPECT_TRUE(bool(e)) << llvm::toString(e.takeError());
    return std::make_pair(e->steps[0].gradientSyncSeconds,
                          e->steps[2].gradientSyncSeconds);
  };
  auto [perTensor1, perTensor2] = syncOf(0);
  EXPECT_NEAR(perTensor1, kSyncW1PerTensor, 1e-12);
  EXPECT_NEAR(perTensor2, kSyncW2PerTensor, 1e-13);
  auto [bucketed1, bucketed2] = syncOf(25.0 * 1024 * 1024);
  EXPECT_NEAR(bucketed1, kSyncW1, 1e-12);
  EXPECT_NEAR(bucketed2, kSyncW2, 1e-13);
  // Two latencies (2 · 2e-5 s) per tensor become a share of one.
  double latencies = perTensor1 + perTensor2 - bucketed1 - bucketed2;
  EXPECT_NEAR(latencies, 2 * 2e-5 - (0.04 + 3.90625e-4) * 2e-5, 1e-15);
  // Bytes conserved: what is left once each latency share is taken off is
  // the bandwidth term, the same (L/1e9) in both.
  EXPECT_NEAR(bucketed1 - 0.04 * 2e-5, perTensor1 - 2e-5, 1e-15);
  // A 512 KiB bucket: fc1 (1 MiB) is its own collective, priced as before;
  // fc2 pays 10,240 / 524,288 of a latency.
  auto [small1, small2] = syncOf(512 * 1024);
  EXPECT_NEAR(small1, kSyncW1PerTensor, 1e-12);
  EXPECT_NEAR(small2, 10240.0 / 524288 * 2e-5 + 1.024e-5, 1e-13);
  // The plan's spmd.gradient_bucket_bytes wins over the option.
  (*module)->setAttr(spmd::SpmdDialect::kGradientBucketAttr,
                     mlir::Builder(&ctx).getI64IntegerAttr(0));
  auto [fromPlan1, fromPlan2] = syncOf(25.0 * 1024 * 1024);
  EXPECT_NEAR(fromPlan1, kSyncW1PerTensor, 1e-12);
  EXPECT_NEAR(fromPlan2, kSyncW2PerTensor, 1e-13);
}

TEST(EvaluatorTest, TwoLayerMlpMemoryByHand) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, mlpPlan());
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto estimate = evaluatePlan(*module, spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  ASSERT_EQ(estimate->memory.size(), 2u);
  const DeviceMemoryEstimate &fast = estimate->memory[0];
  EXPECT_EQ(fast.type, "Fast");
  EXPECT_DOUBLE_EQ(fast.terms.parameters, 1058816);
  EXPECT_DOUBLE_EQ(fast.terms.gradients, 1058816);
  EXPECT_DOUBLE_EQ(fast.terms.optimizerState, 2117632);
  EXPECT_DOUBLE_EQ(fast.terms.activations, 1355648);
  EXPECT_DOUBLE_EQ(fast.transientBytes, 49152);
  EXPECT_DOUBLE_EQ(fast.peakBytes(), 5640064);
  EXPECT_TRUE(fast.fits);
  // The slow device keeps a third of the batch-dependent activations:
  // 16·1024·4 + 1,048,576 + 16·256·4 + 16·256·4 + 10,240 + 16·10·4.
  EXPECT_DOUBLE_EQ(estimate->memory[1].terms.activations,
                   65536 + 1048576 + 16384 + 16384 + 10240 + 640);
  EXPECT_DOUBLE_EQ(estimate->peakMemoryBytes, 5640064);
}

TEST(EvaluatorTest, OverlapHidesGradientSyncBehindEarlierBackward) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, mlpPlan());
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  EvalOptions options;
  options.overlapGradientSync = true;
  auto overlapped = evaluatePlan(*module, spec, options);
  ASSERT_TRUE(bool(overlapped));
  // Backward in reverse order: loss dual (2.0004e-5 s), cross-entropy and
  // matmul-2 backward (Fast: 1.92e-10 + 4.9152e-8... at most 1e-7 s), then
  // fc2's sync (3.024e-5 s) starts on the channel; relu and matmul-1
  // backward (≤ 5.1e-6 s) finish long before it ends, and fc1's sync
  // (1.068576e-3 s) starts after matmul 1's backward. Nearly all of fc1's
  // sync stays exposed; the exposure is at least sync(fc1) and at most
  // sync(fc1) + sync(fc2).
  EXPECT_GE(overlapped->exposedGradientSyncSeconds, kSyncW1);
  EXPECT_LT(overlapped->exposedGradientSyncSeconds, kSyncW1 + kSyncW2);
  EXPECT_LT(overlapped->stepSeconds,
            kCompute + kSyncW1 + kSyncW2 + kLoss + kOptimizer);
}

/// mlpPlan() run as `micro` micro-batches, fc1.weight stored `strategy`.
std::string accumulatedMlpPlan(int micro, llvm::StringRef strategy) {
  std::string text = mlpPlan();
  auto replace = [&](llvm::StringRef from, llvm::StringRef to) {
    size_t at = text.find(from.str());
    if (at == std::string::npos) {
      ADD_FAILURE() << "mlpPlan() has no '" << from.str() << "'";
      return;
    }
    text.replace(at, from.size(), to.str());
  };
  replace("spmd.version = 2 : i64}",
          "spmd.micro_batches = " + std::to_string(micro) +
              " : i64, spmd.version = 2 : i64}");
  replace(
      "\"fc1.weight\" {strategy = #spmd.strategy<replicated>}",
      ("\"fc1.weight\" {strategy = #spmd.strategy<" + strategy + ">}").str());
  return text;
}

// Gradient accumulation over 4 micro-batches (docs/Evaluator.md): the
// steps are one micro-batch; compute and the loss all-reduce run 4 times,
// the replicated gradients sync once, the optimizer steps once:
//   4·(kCompute + kLoss) + kSyncW1 + kSyncW2 + kOptimizer.
TEST(EvaluatorTest, AccumulationSyncsWholeGradientsOnce) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, accumulatedMlpPlan(4, "replicated"));
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto estimate = evaluatePlan(*module, spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  EXPECT_EQ(estimate->microBatches, 4);
  ASSERT_EQ(estimate->steps.size(), 5u);
  EXPECT_NEAR(estimate->steps[0].onceSyncSeconds, kSyncW1, 1e-12);
  EXPECT_NEAR(estimate->steps[2].onceSyncSeconds, kSyncW2, 1e-13);
  EXPECT_NEAR(estimate->computeSeconds, 4 * kCompute, 1e-13);
  EXPECT_NEAR(estimate->commSeconds, 4 * kLoss + kSyncW1 + kSyncW2, 1e-12);
  EXPECT_NEAR(estimate->optimizerSeconds, kOptimizer, 1e-15);
  EXPECT_NEAR(estimate->stepSeconds,
              4 * (kCompute + kLoss) + kSyncW1 + kSyncW2 + kOptimizer, 1e-12);
}

// A ZeRO-2 parameter holds a shard of its gradient: it reduce-scatters
// after every micro-batch; its after-update all-gather stays once per step.
TEST(EvaluatorTest, AccumulationSyncsShardedGradientsEveryMicroBatch) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  auto one = parsePlan(ctx, accumulatedMlpPlan(1, "zero2"));
  auto four = parsePlan(ctx, accumulatedMlpPlan(4, "zero2"));
  ASSERT_TRUE(one && four);
  auto e1 = evaluatePlan(*one, spec);
  auto e4 = evaluatePlan(*four, spec);
  ASSERT_TRUE(bool(e1)) << llvm::toString(e1.takeError());
  ASSERT_TRUE(bool(e4)) << llvm::toString(e4.takeError());
  double syncW1 = e1->steps[0].gradientSyncSeconds;
  ASSERT_GT(syncW1, 0);
  EXPECT_EQ(e4->steps[0].onceSyncSeconds, 0);
  EXPECT_NEAR(e4->stepSeconds,
              4 * (kCompute + kLoss + syncW1) + kSyncW2 + e1->optimizerSeconds,
              1e-12);
  // With one micro-batch the attribute changes nothing.
  EXPECT_NEAR(e1->stepSeconds,
              kCompute + kLoss + syncW1 + kSyncW2 + e1->optimizerSeconds,
              1e-12);
}

// Under accumulation a micro-batch other than the last waits for each
// step's repeated communication on the device where it is largest: here
// device 0 syncs 8 s of whole gradients once per step (2 s of other
// communication) and device 1 syncs 9 s of ZeRO-2 gradient shards after
// every micro-batch. The maxima of a step (10 s of comm, 8 s once) would
// say 2 s per micro-batch; device 1 needs 9 s.
TEST(EvaluatorTest, AccumulationTakesRepeatedCommPerDevice) {
  StepEstimate s;
  s.computeSeconds = 1;
  s.commSeconds = 10;         // device 0: 2 + 8 once; device 1: 9
  s.gradientSyncSeconds = 10; // device 0: 2 + 8; device 1: 9
  s.onceSyncSeconds = 8;      // device 0
  s.repeatedCommSeconds = 9;  // device 1
  s.repeatedSyncSeconds = 9;  // device 1
  StepComposition four = composeSteps({s}, 4, /*overlap=*/false);
  EXPECT_DOUBLE_EQ(four.computeSeconds, 4);
  EXPECT_DOUBLE_EQ(four.commSeconds, 10 + 3 * 9);
  EXPECT_DOUBLE_EQ(four.exposedSyncSeconds, 10 + 3 * 9);
  EXPECT_DOUBLE_EQ(four.stepSeconds, 4 * 1 + 10 + 3 * 9);
  // One micro-batch: the step as it is.
  StepComposition one = composeSteps({s}, 1, /*overlap=*/false);
  EXPECT_DOUBLE_EQ(one.stepSeconds, 1 + 10);
  // With overlap an earlier step's backward (3 s) hides part of each
  // micro-batch's sync, which starts after its own backward (0.5 s):
  // exposed 0.5 + 10 − 3.5 = 7 in the last micro-batch, 0.5 + 9 − 3.5 = 6
  // in the others.
  s.backwardSeconds = 0.5;
  StepEstimate early;
  early.computeSeconds = 3;
  early.backwardSeconds = 3;
  StepComposition hidden = composeSteps({early, s}, 4, /*overlap=*/true);
  EXPECT_DOUBLE_EQ(hidden.exposedSyncSeconds, 7 + 3 * 6);
  EXPECT_DOUBLE_EQ(hidden.stepSeconds, 4 * (3 + 1) + 7 + 3 * 6);
}

// The softmax over split classes all-reduces its row maximum and its row
// sum, 8 fp32 values (32 B) each, over the two nodes: 2·(1e-5 + 16/1e9)
// = 2.0032e-5 s per all-reduce. The maximum is a stability shift (no
// dual); the backward all-reduces Σ dy·y once more. Step comm: 3 ·
// 2.0032e-5 s, of which 2.0032e-5 s dual.
TEST(EvaluatorTest, RecipeAllReducesArePriced) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  auto module = parsePlan(
      ctx, splitSoftmaxPlan("softmax.split-reduced, softmax.replicate"));
  ASSERT_TRUE(module);
  auto estimate = evaluatePlan(*module, spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  ASSERT_EQ(estimate->steps.size(), 2u);
  EXPECT_EQ(estimate->steps[0].commSeconds, 0);
  EXPECT_NEAR(estimate->steps[1].commSeconds, 3 * 2.0032e-5, 1e-13);
  EXPECT_NEAR(estimate->steps[1].dualSeconds, 2.0032e-5, 1e-13);
  EXPECT_NEAR(estimate->commSeconds, 3 * 2.0032e-5, 1e-13);
}

TEST(EvaluatorTest, MeshMustMatchCluster) {
  mlir::MLIRContext ctx;
  std::string text =
      R"(module attributes {spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "Fast", peak_gflops = 10000, memory_mb = 16000, nodes = [0]>]>} {
  func.func @main() { return }
})";
  auto module = parsePlan(ctx, text);
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto estimate = evaluatePlan(*module, spec);
  ASSERT_FALSE(bool(estimate));
  EXPECT_EQ(llvm::toString(estimate.takeError()),
            "the plan's mesh has 1 nodes of 1 devices; the cluster 'toy-2' "
            "has 2 nodes and cuts into 2 such");
}

/// kToyCluster's device types with `nodes` (YAML list items) as its nodes.
llvm::Expected<ClusterSpec> toyClusterWithNodes(llvm::StringRef nodes) {
  std::string cluster = kToyCluster;
  cluster.replace(cluster.find("nodes:\n") + 7, std::string::npos, nodes);
  return parseClusterSpec(cluster, "toy-nodes.yaml");
}

TEST(EvaluatorTest, ClusterNodesCutIntoMeshNodes) {
  // A node of two Fast devices and one of one Slow device: a mesh of one
  // device per node has three nodes, the first two on cluster node a.
  auto spec = toyClusterWithNodes(
      "  - {name: a, type: Fast, devices: 2, intra_bandwidth: 10 GB/s}\n"
      "  - {name: b, type: Slow, devices: 1}\n");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  mlir::MLIRContext ctx;
  auto module = parsePlan(
      ctx, R"(module attributes {spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "Fast", peak_gflops = 10000, memory_mb = 16000, nodes = [0, 1]>,
    #spmd.device_class<type = "Slow", peak_gflops = 5000, memory_mb = 8000, nodes = [2]>]>} {
  func.func @main() {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<1000xf32> -> #spmd.dist<[id, id]>
    return
  }
})");
  ASSERT_TRUE(module);
  EvalOptions perTensor;
  perTensor.gradientBucketBytes = 0;
  auto estimate = evaluatePlan(*module, *spec, perTensor);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  ASSERT_EQ(estimate->memory.size(), 3u);
  EXPECT_EQ(estimate->memory[1].clusterDevice, 1u);
  EXPECT_EQ(estimate->memory[2].clusterDevice, 2u);
  EXPECT_EQ(estimate->memory[2].type, "Slow");
  // The 4000 B gradient sync (one tensor at a time) takes the fastest of
  // a ring (4 rounds of 4000/3 B, each 1e-5 + 1333/1e9 s = 4.5333e-5 s),
  // the hierarchical all-reduce (reduce-scatter and all-gather inside node
  // a: 1 round of 2000 B at 1e10 B/s each, no latency given: 2·2e-7 s;
  // plus 2 rounds of 4000/2 B across the nodes, 2·(1e-5 + 2e-6) s:
  // 2.44e-5 s) and the tree: one tree hop (1e-5 s) and 2000 B each way
  // through each NIC (2e-6 s; the chain's 4000 B at 1e10 B/s is less),
  // reduced and broadcast: 2·(1e-5 + 2e-6) = 2.4e-5 s.
  EXPECT_NEAR(estimate->commSeconds, 2 * (1e-5 + 2e-6), 1e-12);
}

} // namespace

// Devices of one type split unevenly: each computes its own rows. Two Fast
// devices on one node hold 16 and 48 of the 64 rows; the step takes the
// 48-row device's 2·48·256·1024 forward + twice that backward = 75,497,472
// FLOP / 1e13 = 7.5497472e-6 s (the 16-row device's third of it, had its
// shard shapes been reused for the other device of its type).
TEST(EvaluatorTest, DevicesOfOneTypePricedByTheirOwnShards) {
  auto spec = toyClusterWithNodes(
      "  - {name: a, type: Fast, devices: 2, intra_bandwidth: 10 GB/s}\n");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  mlir::MLIRContext ctx;
  auto module = parsePlan(
      ctx, R"(module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "Fast", peak_gflops = 10000, memory_mb = 16000, nodes = [0]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.5], sizes = [16, 48]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<64x1024xf32> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>}) -> tensor<64x256xf32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<1024x256xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local (%x, %w) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32> {
    ^bb0(%a: tensor<64x1024xf32>, %b: tensor<1024x256xf32>):
      %m = graph.matmul %a, %b : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
      spmd.yield %m : tensor<64x256xf32>
    }
    return %h : tensor<64x256xf32>
  }
})");
  ASSERT_TRUE(module);
  auto estimate = evaluatePlan(*module, *spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  ASSERT_FALSE(estimate->steps.empty());
  EXPECT_NEAR(estimate->steps[0].computeSeconds, 7.5497472e-6, 1e-15);
  // Each device keeps its own shard of x: 16 and 48 rows of 4 KiB.
  ASSERT_EQ(estimate->memory.size(), 2u);
  EXPECT_LT(estimate->memory[0].terms.activations,
            estimate->memory[1].terms.activations);
}
