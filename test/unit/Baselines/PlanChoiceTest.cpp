//===- PlanChoiceTest.cpp - Which plan is written, when to accumulate -----===//

#include "weft/Synth/PlanChoice.h"
#include "../Eval/EvalTestUtil.h"
#include "MlpGraph.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::test;

namespace {

ExitCode exitCodeOf(llvm::Error err) {
  ExitCode code = ExitInternal;
  llvm::handleAllErrors(
      std::move(err), [&](const WeftError &e) { code = e.getCode(); },
      [](const llvm::ErrorInfoBase &) {});
  return code;
}

mlir::OwningOpRef<mlir::ModuleOp> baseline(mlir::ModuleOp graph,
                                           const ClusterSpec &spec,
                                           BaselineKind kind) {
  auto built = buildBaseline(kind, graph, spec, DType::FP32);
  EXPECT_TRUE(bool(built)) << llvm::toString(built.takeError());
  return std::move(built->plan);
}

TEST(PlanChoice, AFasterCandidateThatFitsIsWritten) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec spec = toyCluster();
  // On devices of unequal speed DP-CP beats DP-EV; hand DP-EV in as the
  // search's plan.
  auto even = baseline(*graph, spec, BaselineKind::DPEven);
  auto prop = baseline(*graph, spec, BaselineKind::DPCompute);
  auto chosen = choosePlan(std::move(even), {{"DP-CP", *prop}}, spec, {});
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_EQ(chosen->source, "DP-CP");
  ASSERT_EQ(chosen->candidates.size(), 1u);
  EXPECT_LT(chosen->estimate.stepSeconds, chosen->searchEstimate.stepSeconds);
  EXPECT_EQ(chosen->estimate.stepSeconds,
            chosen->candidates[0].second.stepSeconds);
}

TEST(PlanChoice, TheSearchsPlanIsKeptWhenNoCandidateBeatsIt) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec spec = toyCluster();
  auto prop = baseline(*graph, spec, BaselineKind::DPCompute);
  auto even = baseline(*graph, spec, BaselineKind::DPEven);
  mlir::Operation *own = prop->getOperation();
  auto chosen = choosePlan(std::move(prop), {{"DP-EV", *even}}, spec, {});
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_EQ(chosen->source, "search");
  EXPECT_EQ(chosen->plan->getOperation(), own);
  // Figures are those with gradient-sync overlap, as plan.json shows them.
  EvalOptions overlap;
  overlap.overlapGradientSync = true;
  auto direct = evaluatePlan(*chosen->plan, spec, overlap);
  ASSERT_TRUE(bool(direct));
  EXPECT_EQ(chosen->estimate.stepSeconds, direct->stepSeconds);
}

TEST(PlanChoice, NoPlanThatFitsIsAMemoryShortfall) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  std::string text = kToyCluster;
  // Devices of 1 MB cannot hold the 4 MB first layer.
  for (size_t at = text.find("memory:"); at != std::string::npos;
       at = text.find("memory:", at + 1))
    text.replace(at, text.find('\n', at) - at, "memory: 1 MB");
  auto spec = parseClusterSpec(text, "toy-small.yaml");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  auto even = baseline(*graph, *spec, BaselineKind::DPEven);
  auto chosen = choosePlan(std::move(even), {}, *spec, {});
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_FALSE(chosen->estimate.fits);
  llvm::Error err = shortOfMemory(chosen->estimate, {});
  std::string message;
  double overflow = -1;
  ASSERT_TRUE(isMemoryShortfall(err, &overflow, &message));
  EXPECT_NE(message.find("no plan fits in memory: mesh device"),
            std::string::npos)
      << message;
}

TEST(PlanChoice, MicroBatchCounts) {
  auto autoCounts = microBatchCounts("auto", 64, 4, true);
  ASSERT_TRUE(bool(autoCounts));
  EXPECT_EQ(*autoCounts, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  auto fixed = microBatchCounts("auto", 64, 4, false);
  ASSERT_TRUE(bool(fixed));
  EXPECT_EQ(*fixed, std::vector<int64_t>{1});
  auto four = microBatchCounts("4", 64, 4, true);
  ASSERT_TRUE(bool(four));
  EXPECT_EQ(*four, std::vector<int64_t>{4});
  auto uneven = microBatchCounts("3", 64, 4, true);
  ASSERT_FALSE(bool(uneven));
  EXPECT_EQ(exitCodeOf(uneven.takeError()), ExitBadInput);
  auto word = microBatchCounts("many", 64, 4, true);
  ASSERT_FALSE(bool(word));
  EXPECT_EQ(exitCodeOf(word.takeError()), ExitBadInput);
}

TEST(PlanChoice, AccumulationSkipsCountsThatCannotCoverTheShortfall) {
  std::vector<int64_t> tried;
  std::vector<std::string> lines;
  llvm::Error err = withAccumulation(
      {1, 2, 4, 8, 16}, 64,
      [&](int64_t m) -> llvm::Error {
        tried.push_back(m);
        if (m == 1)
          return memoryError(3.0, "short at {0}", m); // needs m >= 3
        if (m < 8)
          return memoryError(1.5, "short at {0}", m);
        return llvm::Error::success();
      },
      [&](llvm::StringRef line) { lines.push_back(line.str()); });
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  EXPECT_EQ(tried, (std::vector<int64_t>{1, 4, 8}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("4 micro-batches of 16 samples"), std::string::npos)
      << lines[0];
}

TEST(PlanChoice, AccumulationStopsAtOtherErrorsAndAtTheLastCount) {
  unsigned calls = 0;
  llvm::Error bad = withAccumulation(
      {1, 2}, 8,
      [&](int64_t) -> llvm::Error {
        ++calls;
        return badInput("broken model");
      },
      [](llvm::StringRef) {});
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(exitCodeOf(std::move(bad)), ExitBadInput);
  llvm::Error last = withAccumulation(
      {1, 2}, 8,
      [&](int64_t m) { return memoryError(1.2, "short at {0}", m); },
      [](llvm::StringRef) {});
  double overflow = 0;
  EXPECT_TRUE(isMemoryShortfall(last, &overflow));
  llvm::consumeError(std::move(last));
}

} // namespace
