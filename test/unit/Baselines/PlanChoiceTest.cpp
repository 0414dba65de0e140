//===- PlanChoiceTest.cpp - Which plan is written, when to accumulate -----===//

#include "weft/Synth/PlanChoice.h"
#include "../Eval/EvalTestUtil.h"
#include "MlpGraph.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Builders.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <cmath>

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

mlir::OwningOpRef<mlir::ModuleOp>
baseline(mlir::ModuleOp graph, const ClusterSpec &spec, BaselineKind kind) {
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

/// The fitting candidate of `chosen` with the least step time.
std::string fastestThatFits(const ChosenPlan &chosen) {
  std::string name;
  double best = INFINITY;
  for (const auto &[n, e] : chosen.candidates)
    if (e.fits && e.stepSeconds < best) {
      best = e.stepSeconds;
      name = n;
    }
  return name;
}

TEST(PlanChoice, OfCandidatesThatFitTheFastestReplacesAPlanThatDoesNot) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec toy = toyCluster();
  EvalOptions options;
  options.reservedMemoryFraction = 0;
  options.overlapGradientSync = true;
  // The slow device's memory between what DP-CP and DP-EV need there (DP-EV
  // gives it more rows): DP-EV, the "search's" plan, does not fit.
  auto evenOnToy =
      evaluatePlan(*baseline(*graph, toy, BaselineKind::DPEven), toy, options);
  auto propOnToy = evaluatePlan(*baseline(*graph, toy, BaselineKind::DPCompute),
                                toy, options);
  ASSERT_TRUE(bool(evenOnToy) && bool(propOnToy));
  double need = evenOnToy->memory[1].peakBytes();
  double less = propOnToy->memory[1].peakBytes();
  ASSERT_LT(less, need);
  std::string text = kToyCluster;
  size_t at = text.find("memory: 8 GB");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12,
               "memory: " + std::to_string((need + less) / 2 / 1e6) + " MB");
  auto spec = parseClusterSpec(text, "toy-tight.yaml");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> plans;
  std::vector<CandidatePlan> candidates;
  for (BaselineKind kind : allBaselines()) {
    plans.push_back(baseline(*graph, *spec, kind));
    candidates.push_back({baselineName(kind).str(), *plans.back()});
  }
  // A slower plan that fits as well: DP-CP run as two micro-batches of the
  // same size (twice the compute, the same memory).
  plans.push_back(baseline(*graph, *spec, BaselineKind::DPCompute));
  (*plans.back())
      ->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                mlir::Builder(&ctx).getI64IntegerAttr(2));
  candidates.push_back({"DP-CP x2", *plans.back()});
  for (bool reverse : {false, true}) {
    std::vector<CandidatePlan> order = candidates;
    if (reverse)
      std::reverse(order.begin(), order.end());
    auto chosen = choosePlan(baseline(*graph, *spec, BaselineKind::DPEven),
                             order, *spec, options);
    ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
    EXPECT_FALSE(chosen->searchEstimate.fits);
    EXPECT_TRUE(chosen->estimate.fits);
    EXPECT_EQ(chosen->source, fastestThatFits(*chosen)) << reverse;
    unsigned fitting = llvm::count_if(
        chosen->candidates, [](const auto &c) { return c.second.fits; });
    EXPECT_GE(fitting, 2u);
  }
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
      {1, 2}, 8, [&](int64_t m) { return memoryError(1.2, "short at {0}", m); },
      [](llvm::StringRef) {});
  double overflow = 0;
  EXPECT_TRUE(isMemoryShortfall(last, &overflow));
  llvm::consumeError(std::move(last));
}

} // namespace
