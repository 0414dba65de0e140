//===- PipelineSynthTest.cpp - Stage cuts, device groups, pipelined plans -===//
//
// The stage DP on synthetic cost tables (balanced cuts, heterogeneous
// groups, memory with 1F1B's in-flight micro-batches, too many stages),
// the program's cut points and sub-programs, and synthesizePipeline on a
// toy cluster: a verified two-stage plan, and auto never worse than one
// stage.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/PipelineSynth.h"
#include "Spmd/IR/SpmdOps.h"
#include "StageAssembly.h"
#include "StageProgram.h"
#include "SynthTestUtil.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "weft/Synth/StageCuts.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::synth;
using namespace weft::synth::test;

namespace {

/// Work per boundary range, speed per node, activation bytes per range.
struct TableModel : StageCostModel {
  std::vector<double> work, speed, kept;
  double capacity = 1e30;
  double link = 0;

  unsigned numCuts() const override { return work.size(); }
  unsigned numNodes() const override { return speed.size(); }
  double stageSeconds(unsigned a, unsigned b, unsigned u,
                      unsigned v) const override {
    double w = 0, s = 0;
    for (unsigned i = a; i < b; ++i)
      w += work[i];
    for (unsigned n = u; n < v; ++n)
      s += speed[n];
    return w / s;
  }
  double linkSeconds(unsigned) const override { return link; }
  bool fits(unsigned a, unsigned b, unsigned u, unsigned v,
            int64_t inFlight) const override {
    double bytes = 0;
    for (unsigned i = a; i < b; ++i)
      bytes += (kept.empty() ? 0 : kept[i]) * double(inFlight);
    return bytes <= capacity * double(v - u);
  }
};

TEST(StageCutsTest, BalancedCutsOnEqualNodes) {
  TableModel m;
  m.work.assign(6, 1);
  m.speed = {1, 1};
  auto p = chooseStages(m, 2, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cuts, (std::vector<unsigned>{0, 3, 6}));
  EXPECT_EQ(p->nodes, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(p->slowest, 3);
  EXPECT_DOUBLE_EQ(p->pipelineSeconds(8), 6 + 7 * 3);
}

TEST(StageCutsTest, GroupsFollowSpeed) {
  // Nodes of speed 1, 1, 2: {0, 1} and {2} are equally fast, so the
  // balanced cut is in the middle; {0} and {1, 2} would pace at 5/3.
  TableModel m;
  m.work.assign(6, 1);
  m.speed = {1, 1, 2};
  auto p = chooseStages(m, 2, 8);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes, (std::vector<unsigned>{0, 2, 3}));
  EXPECT_EQ(p->cuts, (std::vector<unsigned>{0, 3, 6}));
  EXPECT_DOUBLE_EQ(p->slowest, 1.5);
}

TEST(StageCutsTest, SlowLinkMovesNoCutButCounts) {
  TableModel m;
  m.work.assign(4, 1);
  m.speed = {1, 1};
  m.link = 0.5;
  auto p = chooseStages(m, 2, 4);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->linkSeconds.size(), 1u);
  EXPECT_DOUBLE_EQ(p->fill, 2 + 0.5 + 2);
}

TEST(StageCutsTest, InFlightActivationsUnder1F1B) {
  EXPECT_EQ(inFlightMicroBatches(0, 2, 4), 2);
  EXPECT_EQ(inFlightMicroBatches(1, 2, 4), 1);
  EXPECT_EQ(inFlightMicroBatches(0, 4, 2), 2);
  EXPECT_EQ(inFlightMicroBatches(0, 1, 1), 1);
  // Stage 0 keeps two micro-batches, stage 1 one: with 4 bytes per node
  // and 1 byte per range per micro-batch, the balanced cut (3 + 3) does
  // not fit stage 0 (6 bytes), 2 + 4 does (4 and 4).
  TableModel m;
  m.work.assign(6, 1);
  m.speed = {1, 1};
  m.kept.assign(6, 1);
  m.capacity = 4;
  auto p = chooseStages(m, 2, 4);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cuts, (std::vector<unsigned>{0, 2, 6}));
  // At 3 bytes per node no cut fits both stages.
  m.capacity = 3;
  EXPECT_FALSE(chooseStages(m, 2, 4));
}

/// Recomputing doubles a stage's time and always fits.
struct RecomputingModel : TableModel {
  double recomputedSeconds(unsigned a, unsigned b, unsigned u, unsigned v,
                           int64_t) const override {
    return 2 * stageSeconds(a, b, u, v);
  }
};

TEST(StageCutsTest, RecomputesWhenOnlyThatFits) {
  // One byte per range and micro-batch, one byte per node: stage 0 (two
  // micro-batches in flight) never fits as it is, stage 1 only with one
  // range. Cutting in the middle and recomputing both (2 + 2 ranges, time
  // 4 each) beats keeping stage 1 (cut at 3: stage 0 takes 6).
  RecomputingModel m;
  m.work.assign(4, 1);
  m.speed = {1, 1};
  m.kept.assign(4, 1);
  m.capacity = 1;
  auto p = chooseStages(m, 2, 4);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cuts, (std::vector<unsigned>{0, 2, 4}));
  EXPECT_EQ(p->recompute, (std::vector<bool>{true, true}));
  EXPECT_DOUBLE_EQ(p->slowest, 4);
}

TEST(StageCutsTest, TooManyStages) {
  TableModel m;
  m.work.assign(3, 1);
  m.speed = {1, 1};
  EXPECT_FALSE(chooseStages(m, 3, 4)); // more stages than nodes
  m.speed = {1, 1, 1, 1};
  EXPECT_FALSE(chooseStages(m, 4, 4)); // more stages than cut ranges
  EXPECT_TRUE(chooseStages(m, 3, 4));
  EXPECT_FALSE(chooseStages(m, 0, 4));
}

/// `blocks` residual blocks over a [batch, 16] activation, ending in a sum.
std::string blocksAt(unsigned blocks, int64_t batch) {
  std::string text = repeatedBlocks(blocks);
  std::string from = "8x16xf32", to = std::to_string(batch) + "x16xf32";
  std::string from32 = "8x32xf32", to32 = std::to_string(batch) + "x32xf32";
  for (auto [f, t] : {std::pair{from, to}, std::pair{from32, to32}})
    for (size_t at = text.find(f); at != std::string::npos;
         at = text.find(f, at + t.size()))
      text.replace(at, f.size(), t);
  return text;
}

TEST(StageProgramTest, CutsAtTheResidualStream) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(3), spec);
  ASSERT_TRUE(parsed.graph) << parsed.error;
  auto program = StageProgram::of(*parsed.graph);
  ASSERT_TRUE(bool(program));
  // Five ops per block and the sum: after each residual add one value
  // crosses; inside a block two do, except in the first, whose residual is
  // the model's input (every stage takes the inputs: nothing crosses).
  EXPECT_EQ(program->size(), 16u);
  EXPECT_EQ(program->cutPoints(),
            (std::vector<unsigned>{1, 2, 3, 4, 5, 10, 15}));
  EXPECT_EQ(program->crossing(5).size(), 1u);
  EXPECT_EQ(program->crossing(7).size(), 2u);
  auto sub = program->subProgram(5, 10);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*sub)));
  auto main = sub->lookupSymbol<mlir::func::FuncOp>("main");
  // The model's input, then the activation from the previous stage; the
  // block's output; its three parameters copied in.
  EXPECT_EQ(main.getNumArguments(), 2u);
  EXPECT_EQ(main.getNumResults(), 1u);
  unsigned params = 0;
  sub->walk([&](mlir::Operation *op) {
    params += op->getName().getStringRef() == "graph.parameter";
  });
  EXPECT_EQ(params, 3u);
}

TEST(StageAssemblyTest, SubClusterKeepsNodesAndClasses) {
  ClusterSpec spec = cluster(4, 2);
  ClusterSpec sub = subCluster(spec, {1, 2});
  ASSERT_EQ(sub.numNodes(), 2u);
  EXPECT_EQ(sub.numDevices(), 4u);
  EXPECT_EQ(sub.nodes[0].deviceType, spec.nodes[1].deviceType);
  EXPECT_EQ(sub.nodes[1].firstDevice, 2u);
  EXPECT_EQ(sub.classes.size(), 2u);
  EXPECT_EQ(sub.classOf(3).nodes, (std::vector<unsigned>{1}));
}

/// The program of one micro-batch of `blocks` blocks at a batch of 8.
GraphAtMicroBatches graphsOf(mlir::MLIRContext &ctx, unsigned blocks) {
  return [&ctx, blocks](
             int64_t m) -> llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> {
    auto graph =
        mlir::parseSourceString<mlir::ModuleOp>(blocksAt(blocks, 8 / m), &ctx);
    if (!graph)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "does not parse");
    return graph;
  };
}

TEST(PipelineSynthTest, TwoStagesOnTwoNodes) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(4), spec);
  ASSERT_TRUE(parsed.graph) << parsed.error;
  PipelineOptions options;
  options.stages = 2;
  options.microBatches = 2;
  SynthOptions synth;
  auto result = synthesizePipeline(graphsOf(ctx, 4), 8, spec, options, synth);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(spmd::isPipelined(*result->plan));
  auto stages = spmd::getStages(*result->plan);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(result->estimate.stages.size(), 2u);
  EXPECT_EQ(result->microBatches, 2);
  EXPECT_EQ(result->stageInfo[0].nodes, (std::vector<unsigned>{0}));
  EXPECT_EQ(result->stageInfo[1].nodes, (std::vector<unsigned>{1}));
  // The stages meet at a cut point and cover the program.
  EXPECT_EQ(result->stageInfo[0].firstOp, 0u);
  EXPECT_EQ(result->stageInfo[0].endOp, result->stageInfo[1].firstOp);
  EXPECT_EQ(result->stageInfo[0].endOp % 5, 0u);
  unsigned sends = 0, recvs = 0;
  result->plan->walk([&](spmd::SendOp) { ++sends; });
  result->plan->walk([&](spmd::RecvOp) { ++recvs; });
  EXPECT_EQ(sends, 1u);
  EXPECT_EQ(recvs, 1u);
  EXPECT_TRUE(result->estimate.fits);
  EXPECT_GT(result->estimate.stepSeconds, 0);
}

TEST(PipelineSynthTest, AutoIsNeverWorseThanOneStage) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(4), spec);
  ASSERT_TRUE(parsed.graph) << parsed.error;
  PipelineOptions options;
  options.maxStages = 2;
  SynthOptions synth;
  auto result = synthesizePipeline(graphsOf(ctx, 4), 8, spec, options, synth);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->trials.size(), 2u);
  EXPECT_EQ(result->trials[0].stages, 1u);
  ASSERT_TRUE(result->trials[0].error.empty()) << result->trials[0].error;
  EXPECT_LE(result->estimate.stepSeconds, result->trials[0].stepSeconds);
}

TEST(PipelineSynthTest, SketchWithoutSynthesis) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(4), spec);
  ASSERT_TRUE(parsed.graph) << parsed.error;
  auto sketch = sketchPipeline(*parsed.graph, spec, 2, 2, 16, EvalOptions());
  ASSERT_TRUE(bool(sketch)) << llvm::toString(sketch.takeError());
  ASSERT_TRUE(sketch->has_value());
  const PipelineSketch &p = **sketch;
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[0].firstOp, 0u);
  EXPECT_EQ(p.stages[0].endOp, p.stages[1].firstOp);
  EXPECT_EQ(p.stages[1].endOp, 21u);
  EXPECT_GT(p.pipelineSeconds, 0);
  auto three = sketchPipeline(*parsed.graph, spec, 3, 2, 16, EvalOptions());
  ASSERT_FALSE(bool(three));
  llvm::consumeError(three.takeError());
}

TEST(PipelineSynthTest, MoreStagesThanNodesIsBadInput) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  PipelineOptions options;
  options.stages = 3;
  auto result =
      synthesizePipeline(graphsOf(ctx, 4), 8, spec, options, SynthOptions());
  ASSERT_FALSE(bool(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("has 2 node(s)"),
            std::string::npos);
}

} // namespace
