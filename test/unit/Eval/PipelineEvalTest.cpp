//===- PipelineEvalTest.cpp - The step and memory of pipelined plans ------===//
//
// docs/Evaluator.md, "Pipelined plans": a two-stage plan on the toy cluster
// (stage 0 on the Fast node, stage 1 on the Slow one) whose terms are
// checked against the stages evaluated alone and the point-to-point times
// of lib/Cost, and the two hand-written plans of test/lit/Exec/Inputs.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtil.h"
#include "weft/Cost/Collective.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Eval/StepEvents.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace weft;
using namespace weft::test;

namespace {

/// One stage's class on the toy cluster.
std::string stageMesh(bool fast) {
  return fast ? R"(spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "Fast", peak_gflops = 10000, memory_mb = 16000, nodes = [0]>]>)"
              : R"(spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "Slow", peak_gflops = 5000, memory_mb = 8000, nodes = [0]>]>)";
}

/// A dense layer `%out = relu(%in · %w_name)` of width h in a stage.
std::string layer(llvm::StringRef in, llvm::StringRef out, llvm::StringRef w,
                  int64_t h) {
  std::string t = "tensor<8x" + std::to_string(h) + "xf32>";
  std::string wt =
      "tensor<" + std::to_string(h) + "x" + std::to_string(h) + "xf32>";
  return "    %" + w.str() + " = spmd.parameter \"" + w.str() +
         "\" {strategy = #spmd.strategy<replicated>} : " + wt +
         " -> #spmd.dist<[id, id]>\n    %" + out.str() + "m = spmd.local(%" +
         in.str() + ", %" + w.str() +
         ") {dists = [#spmd.dist<[id, id]>], variant = \"matmul.replicate, "
         "matmul.replicate\"} : (" +
         t + ", " + wt + ") -> " + t + " {\n    ^bb0(%a: " + t + ", %c: " + wt +
         "):\n      %v = graph.matmul %a, %c : (" + t + ", " + wt + ") -> " +
         t + "\n      spmd.yield %v : " + t + "\n    }\n    %" + out.str() +
         " = spmd.local(%" + out.str() +
         "m) {dists = [#spmd.dist<[id, id]>], variant = \"relu.replicate, "
         "relu.replicate\"} : (" +
         t + ") -> " + t + " {\n    ^bb0(%a: " + t +
         "):\n      %v = graph.relu %a : " + t +
         "\n      spmd.yield %v : " + t + "\n    }\n";
}

/// Two stages of width h: stage 0 (Fast node) runs `layers0` layers and
/// sends, stage 1 (Slow node) receives, runs `layers1` layers and the loss
/// (a sum).
std::string pipelinePlan(llvm::StringRef schedule, int64_t m, int64_t h,
                         int layers0, int layers1) {
  std::string t = "tensor<8x" + std::to_string(h) + "xf32>";
  std::string s0 = "module @stage0 attributes {spmd.stage = 0 : i64, "
                   "spmd.nodes = array<i64: 0>, " +
                   stageMesh(true) + "} {\n  func.func @main(%x0: " + t +
                   ") {\n";
  std::string last = "x0";
  for (int i = 0; i < layers0; ++i) {
    std::string out = "a" + std::to_string(i);
    s0 += layer(last, out, "w0_" + std::to_string(i), h);
    last = out;
  }
  s0 += "    spmd.send %" + last + " {peer = 1 : i64} : " + t +
        "\n    return\n  }\n}\n";
  std::string s1 = "module @stage1 attributes {spmd.stage = 1 : i64, "
                   "spmd.nodes = array<i64: 1>, " +
                   stageMesh(false) + "} {\n  func.func @main(%x0: " + t +
                   ") -> tensor<f32> {\n    %h = spmd.recv {peer = 0 : i64} "
                   ": " +
                   t + " -> #spmd.dist<[id, id]>\n";
  last = "h";
  for (int i = 0; i < layers1; ++i) {
    std::string out = "b" + std::to_string(i);
    s1 += layer(last, out, "w1_" + std::to_string(i), h);
    last = out;
  }
  s1 += "    %loss = spmd.local(%" + last +
        ") {dists = [#spmd.dist<[id, id]>], variant = \"reduce_sum.replicate, "
        "reduce_sum.replicate\"} : (" +
        t + ") -> tensor<f32> {\n    ^bb0(%a: " + t +
        "):\n      %v = graph.reduce_sum %a {axes = array<i64: 0, 1>, keepdims "
        "= false} : " +
        t +
        " -> tensor<f32>\n      spmd.yield %v : tensor<f32>\n    }\n"
        "    return %loss : tensor<f32>\n  }\n}\n";
  return std::string("module attributes {") + kToyMesh +
         ", spmd.micro_batches = " + std::to_string(m) +
         " : i64, spmd.schedule = \"" + schedule.str() +
         "\", spmd.version = 2 : i64} {\n" + s0 + s1 + "}\n";
}

PlanEstimate evaluate(mlir::ModuleOp plan, const ClusterSpec &spec) {
  auto e = evaluatePlan(plan, spec);
  if (!e) {
    ADD_FAILURE() << llvm::toString(e.takeError());
    return {};
  }
  return std::move(*e);
}

/// The step the formula gives from an estimate's stage terms.
double formula(const PlanEstimate &e) {
  double fill = 0, slowest = 0, tail = 0;
  for (const StageEstimate &s : e.stages) {
    fill += s.microBatchSeconds + s.sendSeconds;
    slowest = std::max({slowest, s.microBatchSeconds, s.sendSeconds});
    tail = std::max(tail, s.onceSeconds);
  }
  return fill + double(e.microBatches - 1) * slowest + tail;
}

TEST(PipelineEvalTest, TermsAddUp) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  auto plan = parsePlan(ctx, pipelinePlan("1f1b", 3, 64, 1, 1));
  ASSERT_TRUE(plan);
  PlanEstimate e = evaluate(*plan, spec);
  ASSERT_EQ(e.stages.size(), 2u);
  EXPECT_EQ(e.microBatches, 3);
  EXPECT_EQ(e.schedule, "1f1b");
  EXPECT_DOUBLE_EQ(e.stepSeconds, formula(e));
  EXPECT_NEAR(e.stepSeconds - e.pipelineSeconds,
              std::max(e.stages[0].onceSeconds, e.stages[1].onceSeconds),
              1e-12 * e.stepSeconds);
  // Each stage's terms are its own plan's: evaluated alone for one
  // micro-batch its step is t_s plus the once-per-step part.
  auto stages = spmd::getStages(*plan);
  for (unsigned s = 0; s < 2; ++s) {
    PlanEstimate alone = evaluate(stages[s], spec);
    EXPECT_GT(e.stages[s].microBatchSeconds, 0);
    EXPECT_DOUBLE_EQ(alone.stepSeconds,
                     e.stages[s].microBatchSeconds + e.stages[s].onceSeconds);
    EXPECT_EQ(e.stages[s].nodes, std::vector<int64_t>{int64_t(s)});
    EXPECT_EQ(e.stages[s].devices, std::vector<unsigned>{s});
  }
  // The activation (8 x 64 fp32) forward to the Slow node, its gradient
  // back, each one point-to-point send.
  double bytes = 8 * 64 * 4;
  EXPECT_DOUBLE_EQ(e.stages[0].sendSeconds,
                   pointToPointSeconds(spec, 0, 1, bytes) +
                       pointToPointSeconds(spec, 1, 0, bytes));
  EXPECT_EQ(e.stages[1].sendSeconds, 0);
  // Memory is listed per cluster device.
  ASSERT_EQ(e.memory.size(), 2u);
  EXPECT_EQ(e.memory[0].clusterDevice, 0u);
  EXPECT_EQ(e.memory[1].clusterDevice, 1u);
  EXPECT_TRUE(e.fits);
  // The bubble: each stage is idle for the part of the makespan it does
  // not compute.
  for (const StageEstimate &s : e.stages)
    EXPECT_DOUBLE_EQ(s.bubbleFraction,
                     1 - 3 * s.microBatchSeconds / e.pipelineSeconds);
  EXPECT_GT(e.bubbleFraction, 0);
  EXPECT_LT(e.bubbleFraction, 1);
}

TEST(PipelineEvalTest, OneMicroBatchIsTheSumOfStages) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  auto plan = parsePlan(ctx, pipelinePlan("1f1b", 1, 64, 2, 1));
  ASSERT_TRUE(plan);
  PlanEstimate e = evaluate(*plan, spec);
  ASSERT_EQ(e.stages.size(), 2u);
  auto stages = spmd::getStages(*plan);
  double sum = 0;
  for (unsigned s = 0; s < 2; ++s)
    sum += evaluate(stages[s], spec).stepSeconds - e.stages[s].onceSeconds;
  EXPECT_DOUBLE_EQ(e.pipelineSeconds, sum + e.stages[0].sendSeconds);
  for (const StageEstimate &s : e.stages)
    EXPECT_EQ(s.keptMicroBatches, 1);
}

TEST(PipelineEvalTest, OneFOneBKeepsLessThanGPipe) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  auto onef = parsePlan(ctx, pipelinePlan("1f1b", 4, 64, 1, 1));
  auto gpipe = parsePlan(ctx, pipelinePlan("gpipe", 4, 64, 1, 1));
  ASSERT_TRUE(onef && gpipe);
  PlanEstimate a = evaluate(*onef, spec), b = evaluate(*gpipe, spec);
  ASSERT_EQ(a.memory.size(), b.memory.size());
  for (auto [x, y] : llvm::zip(a.memory, b.memory))
    EXPECT_LE(x.peakBytes(), y.peakBytes());
  // 1F1B keeps S − s micro-batches, GPipe all M.
  EXPECT_EQ(a.stages[0].keptMicroBatches, 2);
  EXPECT_EQ(a.stages[1].keptMicroBatches, 1);
  EXPECT_EQ(b.stages[0].keptMicroBatches, 4);
  EXPECT_EQ(b.stages[1].keptMicroBatches, 4);
  EXPECT_GT(a.memory[0].terms.activations, 0);
  EXPECT_DOUBLE_EQ(b.memory[0].terms.activations,
                   2 * a.memory[0].terms.activations);
  EXPECT_LT(a.peakMemoryBytes, b.peakMemoryBytes);
  // The same makespan.
  EXPECT_DOUBLE_EQ(a.stepSeconds, b.stepSeconds);
}

TEST(PipelineEvalTest, TheSlowerStageDominates) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  // Stage 1 (Slow node, 8 layers) is slower than stage 0 and than the
  // link; each micro-batch past the first adds its time.
  auto p1 = parsePlan(ctx, pipelinePlan("1f1b", 1, 2048, 1, 8));
  auto p5 = parsePlan(ctx, pipelinePlan("1f1b", 5, 2048, 1, 8));
  ASSERT_TRUE(p1 && p5);
  PlanEstimate one = evaluate(*p1, spec), five = evaluate(*p5, spec);
  ASSERT_EQ(five.stages.size(), 2u);
  const StageEstimate &slow = five.stages[1];
  EXPECT_GT(slow.microBatchSeconds, 4 * five.stages[0].microBatchSeconds);
  EXPECT_GT(slow.microBatchSeconds, five.stages[0].sendSeconds);
  EXPECT_NEAR(five.stepSeconds - one.stepSeconds, 4 * slow.microBatchSeconds,
              1e-12 * five.stepSeconds);
  // The fast stage waits: its bubble is the larger.
  EXPECT_GT(five.stages[0].bubbleFraction, slow.bubbleFraction);
}

/// The blocks of `lane` as "F0 B0 ..." (transfers and the update left out).
std::string blocksOf(const StepEvents &events, unsigned device) {
  std::string out;
  for (const StepEvent &e : events.events)
    if (e.device == device &&
        (e.kind == EventKind::Forward || e.kind == EventKind::Backward))
      out += (out.empty() ? "" : " ") +
             std::string(e.kind == EventKind::Forward ? "F" : "B") +
             std::to_string(e.microBatch);
  return out;
}

TEST(PipelineEvalTest, EventsFollowTheSchedule) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = toyCluster();
  for (llvm::StringRef schedule : {"1f1b", "gpipe"}) {
    auto plan = parsePlan(ctx, pipelinePlan(schedule, 3, 64, 1, 1));
    ASSERT_TRUE(plan);
    auto step = evaluatePlanEvents(*plan, spec, {});
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    const StepEvents &ev = step->events;
    ASSERT_EQ(ev.devices.size(), 2u);
    EXPECT_EQ(ev.devices[0].clusterDevice, 0u);
    EXPECT_EQ(ev.devices[1].clusterDevice, 1u);
    // 1F1B: stage 0 warms up with S − s = 2 forwards, stage 1 with one.
    if (schedule == "1f1b") {
      EXPECT_EQ(blocksOf(ev, 0), "F0 F1 B0 F2 B1 B2");
      EXPECT_EQ(blocksOf(ev, 1), "F0 B0 F1 B1 F2 B2");
    } else {
      EXPECT_EQ(blocksOf(ev, 0), "F0 F1 F2 B0 B1 B2");
      EXPECT_EQ(blocksOf(ev, 1), "F0 F1 F2 B0 B1 B2");
    }
    // A lane's blocks do not overlap; each stage-1 forward starts after
    // stage 0's and the activation transfer; the step ends within the
    // estimate.
    double f0[3] = {}, f1[3] = {};
    for (unsigned d : {0u, 1u}) {
      double clock = 0;
      for (const StepEvent &e : ev.events) {
        if (e.device != d || e.overlapped)
          continue;
        EXPECT_GE(e.startSeconds, clock) << e.label;
        clock = e.endSeconds();
        if (e.kind == EventKind::Forward)
          (d == 0 ? f0 : f1)[e.microBatch] = e.startSeconds;
      }
    }
    const PlanEstimate &est = step->estimate;
    for (int mb = 0; mb < 3; ++mb)
      EXPECT_GE(f1[mb], f0[mb] + est.stages[0].forwardSeconds +
                            est.stages[0].sendForwardSeconds - 1e-15);
    EXPECT_GT(ev.endSeconds, 0);
    EXPECT_LE(ev.endSeconds, est.stepSeconds * (1 + 1e-12));
  }
}

/// The hand-written plans weft-run checks (test/lit/Exec/pipeline.test).
struct LitPlans : ::testing::Test {
  mlir::MLIRContext ctx;
  ClusterSpec spec;
  void SetUp() override {
    auto s = loadClusterSpec(WEFT_EXEC_INPUTS "/mixed-2x2.yaml");
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    spec = std::move(*s);
  }
  mlir::OwningOpRef<mlir::ModuleOp> load(llvm::StringRef name) {
    auto buffer = llvm::MemoryBuffer::getFile(WEFT_EXEC_INPUTS "/" + name);
    if (!buffer) {
      ADD_FAILURE() << name.str() << " does not open";
      return {};
    }
    return parsePlan(ctx, (*buffer)->getBuffer());
  }
};

TEST_F(LitPlans, HandWrittenPlansAreEvaluated) {
  auto onef = load("pipeline-mlp-plan.mlir");
  auto gpipe = load("pipeline-mlp-gpipe-plan.mlir");
  ASSERT_TRUE(onef && gpipe);
  PlanEstimate a = evaluate(*onef, spec), b = evaluate(*gpipe, spec);
  for (const PlanEstimate *e : {&a, &b}) {
    ASSERT_EQ(e->stages.size(), 2u);
    EXPECT_DOUBLE_EQ(e->stepSeconds, formula(*e));
    EXPECT_EQ(e->memory.size(), 4u);
    EXPECT_EQ(e->stages[0].devices, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(e->stages[1].devices, (std::vector<unsigned>{2, 3}));
    EXPECT_GT(e->stages[0].sendSeconds, 0);
    EXPECT_TRUE(e->fits);
  }
  EXPECT_EQ(a.microBatches, 2);
  EXPECT_EQ(b.microBatches, 4);
  EXPECT_EQ(b.schedule, "gpipe");
  // Stage 1 all-reduces its partial logits inside the P100 node.
  EXPECT_EQ(a.collectives.size(), 1u);
  // Both P100s receive the activation whole; its gradient goes back as
  // half rows to each V100 under 1F1B (stage 0 splits the batch) and whole
  // to each under GPipe (stage 0 is replicated): the GPipe plan sends more.
  EXPECT_LT(a.stages[0].sendSeconds, b.stages[0].sendSeconds);
  // The estimate's JSON carries the stages.
  llvm::json::Value json = toJSON(a);
  const llvm::json::Array *stages = json.getAsObject()->getArray("stages");
  ASSERT_TRUE(stages);
  EXPECT_EQ(stages->size(), 2u);
}

TEST_F(LitPlans, PlanJSONKeepsTheWholeStepAndAddsStages) {
  auto plan = load("pipeline-mlp-gpipe-plan.mlir");
  ASSERT_TRUE(plan);
  PlanEstimate e = evaluate(*plan, spec);
  auto layout = MeshLayout::get(*plan, spec);
  ASSERT_TRUE(bool(layout)) << llvm::toString(layout.takeError());
  PlanContext context;
  context.globalBatch = 16;
  context.lowerBoundSeconds = 1e-6;
  llvm::json::Value json = planToJSON(*plan, *layout, e, context);
  const llvm::json::Object &root = *json.getAsObject();
  EXPECT_EQ(root.getNumber("step_time_s"), e.stepSeconds);
  EXPECT_EQ(root.getNumber("lower_bound_s"), 1e-6);
  EXPECT_EQ(root.getString("schedule"), llvm::StringRef("gpipe"));
  const llvm::json::Array *memory = root.getArray("memory");
  ASSERT_TRUE(memory);
  ASSERT_EQ(memory->size(), 4u);
  for (const llvm::json::Value &m : *memory)
    EXPECT_EQ(m.getAsObject()->getBoolean("fits"), true);
  const llvm::json::Array *stages = root.getArray("stages");
  ASSERT_TRUE(stages);
  ASSERT_EQ(stages->size(), 2u);
  const llvm::json::Object &s1 = *(*stages)[1].getAsObject();
  EXPECT_EQ(s1.getInteger("index"), 1);
  EXPECT_EQ(s1.getInteger("kept_micro_batches"), 4);
  EXPECT_EQ(s1.getNumber("micro_batch_s"), e.stages[1].microBatchSeconds);
  EXPECT_EQ(s1.getNumber("bubble_fraction"), e.stages[1].bubbleFraction);
  ASSERT_TRUE(s1.getArray("devices"));
  EXPECT_EQ(s1.getArray("devices")->size(), 2u);
  EXPECT_EQ((*s1.getArray("nodes"))[0].getAsInteger(), 1);
}

} // namespace
