//===- StepEventsTest.cpp - The estimated step as events per device -------===//
//
// evaluatePlanEvents lays the evaluator's figures out in time
// (docs/Evaluator.md, "The step as events"). On the toy cluster the fast
// device holds three times the slow one's rows, so it is the slowest in
// every step's compute: then the latest device's last event ends exactly
// at the estimated step time.
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/StepEvents.h"
#include "EvalTestUtil.h"
#include <map>
#include <set>

using namespace weft;
using namespace weft::test;

namespace {

/// A 2-layer MLP, data parallel 48 : 16 over the toy cluster, with a ZeRO-3
/// bias (gathered before use), a ZeRO-1 weight (gathered after the
/// update) and a softmax split 8 : 2 along its classes (recipe
/// all-reduces); `micro` micro-batches.
std::string plan(int micro) {
  return std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.75, 0.25], sizes = [48, 16]>,
                   #spmd.segment<id = 1, extent = 256, ratios = [0.5, 0.5], sizes = [128, 128]>,
                   #spmd.segment<id = 2, extent = 10, ratios = [0.8, 0.2], sizes = [8, 2]>],
  spmd.micro_batches = )" +
         std::to_string(micro) + R"( : i64, spmd.version = 2 : i64} {
  func.func @main(%x: tensor<64x1024xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) -> tensor<64x10xf32> {
    %w1 = spmd.parameter "fc1.weight" {strategy = #spmd.strategy<replicated>} : tensor<1024x256xf32> -> #spmd.dist<[id, id]>
    %b0 = spmd.parameter "fc1.bias" {strategy = #spmd.strategy<zero3>} : tensor<256xf32> -> #spmd.dist<[gather(0, 1), id]>
    %w2 = spmd.parameter "fc2.weight" {strategy = #spmd.strategy<zero1>} : tensor<256x10xf32> -> #spmd.dist<[id, id]>
    %b = spmd.all_gather %b0 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<256xf32> -> #spmd.dist<[id, id]> loc("fc1.bias")
    %h = spmd.local (%x, %w1) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32> {
    ^bb0(%a: tensor<64x1024xf32>, %c: tensor<1024x256xf32>):
      %m = graph.matmul %a, %c : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32> loc("fc1")
      spmd.yield %m : tensor<64x256xf32>
    }
    %hb = spmd.local (%h, %b) {variant = "add.split", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
    ^bb0(%a: tensor<64x256xf32>, %c: tensor<256xf32>):
      %m = graph.add %a, %c : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
      spmd.yield %m : tensor<64x256xf32>
    }
    %l = spmd.local (%hb, %w2) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x256xf32>, tensor<256x10xf32>) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x256xf32>, %c: tensor<256x10xf32>):
      %m = graph.matmul %a, %c : (tensor<64x256xf32>, tensor<256x10xf32>) -> tensor<64x10xf32> loc("fc2")
      spmd.yield %m : tensor<64x10xf32>
    }
    %g = spmd.all_to_all %l {axis = 0 : i64} : tensor<64x10xf32> -> #spmd.dist<[gather(1, 2), id]>
    %s = spmd.local (%g) {variant = "softmax.split-reduced, softmax.replicate", dists = [#spmd.dist<[gather(1, 2), id]>]} : (tensor<64x10xf32>) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x10xf32>):
      %m = graph.softmax %a {axis = 1 : i64} : tensor<64x10xf32> loc("probs")
      spmd.yield %m : tensor<64x10xf32>
    }
    return %s : tensor<64x10xf32>
  }
})";
}

EstimatedStep evaluate(mlir::MLIRContext &ctx, int micro, bool overlap) {
  auto module = parsePlan(ctx, plan(micro));
  EXPECT_TRUE(module);
  if (!module)
    return {};
  ClusterSpec spec = toyCluster();
  EvalOptions options;
  options.overlapGradientSync = overlap;
  auto step = evaluatePlanEvents(*module, spec, options);
  EXPECT_TRUE(bool(step)) << llvm::toString(step.takeError());
  return step ? std::move(*step) : EstimatedStep();
}

/// Per device, the events of its main stream (not the sync channel).
std::map<unsigned, std::vector<StepEvent>> byDevice(const StepEvents &e) {
  std::map<unsigned, std::vector<StepEvent>> out;
  for (const StepEvent &event : e.events)
    if (!event.overlapped)
      out[event.device].push_back(event);
  return out;
}

/// Every device has events, its main stream never runs two at once, and
/// the latest device's last event (sync channel included) ends at the
/// estimated step time.
void checkLaidOut(const EstimatedStep &step) {
  double stepSeconds = step.estimate.stepSeconds;
  ASSERT_GT(stepSeconds, 0);
  ASSERT_EQ(step.events.devices.size(), 2u);
  auto devices = byDevice(step.events);
  double latest = 0;
  for (const EventDevice &dev : step.events.devices) {
    const std::vector<StepEvent> &events = devices[dev.device];
    ASSERT_FALSE(events.empty()) << "device " << dev.device;
    for (size_t i = 1; i < events.size(); ++i)
      EXPECT_LE(events[i - 1].endSeconds(),
                events[i].startSeconds + 1e-12 * stepSeconds)
          << events[i - 1].label << " then " << events[i].label;
  }
  for (const StepEvent &event : step.events.events) {
    EXPECT_GE(event.startSeconds, 0);
    EXPECT_GT(event.durationSeconds, 0);
    EXPECT_LE(event.endSeconds(), stepSeconds * (1 + 1e-12)) << event.label;
    latest = std::max(latest, event.endSeconds());
  }
  EXPECT_NEAR(latest, stepSeconds, 1e-12 * stepSeconds);
  EXPECT_NEAR(step.events.endSeconds, stepSeconds, 1e-12 * stepSeconds);
}

std::set<std::string> kindsOf(const StepEvents &e) {
  std::set<std::string> kinds;
  for (const StepEvent &event : e.events)
    kinds.insert(eventKindName(event.kind).str());
  return kinds;
}

TEST(StepEventsTest, EveryDeviceEndsByTheStepTime) {
  mlir::MLIRContext ctx;
  EstimatedStep step = evaluate(ctx, 1, /*overlap=*/false);
  checkLaidOut(step);
  EXPECT_EQ(kindsOf(step.events),
            (std::set<std::string>{"forward", "backward", "collective", "sync",
                                   "update"}));
  // The fast device (three times the rows at twice the speed) computes
  // longest: its compute events add up to the estimate's compute.
  double fast = 0, slow = 0;
  for (const StepEvent &e : step.events.events)
    if (e.kind == EventKind::Forward || e.kind == EventKind::Backward)
      (e.device == 0 ? fast : slow) += e.durationSeconds;
  EXPECT_NEAR(fast, step.estimate.computeSeconds,
              1e-12 * step.estimate.computeSeconds);
  EXPECT_LT(slow, fast);
  // Labels name the op and its variant, the collective and its value.
  auto has = [&](llvm::StringRef label) {
    return llvm::any_of(step.events.events,
                        [&](const StepEvent &e) { return e.label == label; });
  };
  EXPECT_TRUE(has("fc1 matmul.split-lhs-rows"));
  EXPECT_TRUE(has("graph.add add.split"));
  EXPECT_TRUE(has("all_gather axis 0: fc1.bias"));
  EXPECT_TRUE(has("reduce_scatter axis 0 (dual of all_gather): fc1.bias"));
  EXPECT_TRUE(has(
      "all_reduce (recipe of probs softmax.split-reduced, softmax.replicate)"));
  EXPECT_TRUE(has("all_gather after the update"));
}

TEST(StepEventsTest, BackwardRunsInReverseAfterTheForward) {
  mlir::MLIRContext ctx;
  EstimatedStep step = evaluate(ctx, 1, /*overlap=*/false);
  double lastForward = 0, firstBackward = 1e9;
  std::vector<std::string> backward;
  for (const StepEvent &e : step.events.events) {
    if (e.device != 0)
      continue;
    if (e.kind == EventKind::Forward)
      lastForward = std::max(lastForward, e.endSeconds());
    if (e.kind == EventKind::Backward) {
      firstBackward = std::min(firstBackward, e.startSeconds);
      backward.push_back(e.label);
    }
  }
  EXPECT_LE(lastForward, firstBackward);
  ASSERT_FALSE(backward.empty());
  EXPECT_EQ(backward.front(), "probs softmax.split-reduced, softmax.replicate");
  EXPECT_EQ(backward.back(), "fc1 matmul.split-lhs-rows");
}

TEST(StepEventsTest, OverlappedSyncsAndMicroBatchesEndByTheStepTime) {
  mlir::MLIRContext ctx;
  for (int micro : {1, 3}) {
    EstimatedStep step = evaluate(ctx, micro, /*overlap=*/true);
    checkLaidOut(step);
    bool overlapped = llvm::any_of(step.events.events, [](const StepEvent &e) {
      return e.kind == EventKind::Sync && e.overlapped;
    });
    EXPECT_TRUE(overlapped) << micro << " micro-batches";
    int64_t lastBatch = 0;
    for (const StepEvent &e : step.events.events)
      lastBatch = std::max(lastBatch, e.microBatch);
    EXPECT_EQ(lastBatch, micro - 1);
  }
}

// The replicated and ZeRO-1 weights' syncs run once per step, in the last
// micro-batch; the ZeRO-3 bias's gradient comes back through its gather's
// dual in every micro-batch.
TEST(StepEventsTest, WholeGradientsSyncInTheLastMicroBatch) {
  mlir::MLIRContext ctx;
  EstimatedStep step = evaluate(ctx, 3, /*overlap=*/false);
  checkLaidOut(step);
  for (const StepEvent &e : step.events.events)
    if (e.kind == EventKind::Sync)
      EXPECT_EQ(e.microBatch, 2) << e.label;
}

// Without the events, the estimate is evaluatePlan's.
TEST(StepEventsTest, EstimateIsTheEvaluators) {
  mlir::MLIRContext ctx;
  auto module = parsePlan(ctx, plan(1));
  ASSERT_TRUE(module);
  ClusterSpec spec = toyCluster();
  auto plain = evaluatePlan(*module, spec);
  auto step = evaluatePlanEvents(*module, spec, EvalOptions());
  ASSERT_TRUE(plain && step);
  EXPECT_EQ(plain->stepSeconds, step->estimate.stepSeconds);
  EXPECT_EQ(plain->peakMemoryBytes, step->estimate.peakMemoryBytes);
}

} // namespace
