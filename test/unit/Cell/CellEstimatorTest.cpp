//===- CellEstimatorTest.cpp - Cell estimates: memo, modes, reasons -------===//

#include "weft/Cell/CellEstimator.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::cell;

namespace {
/// 2 nodes of 2 V100 + 1 node of 4 T4, and a node of a type with 1 MB.
const char *kCluster = R"yaml(
name: tiny-mixed
device_types:
  - name: Small
    base: T4
    memory: 1 MB
nodes:
  - name: v
    count: 2
    type: V100
    devices: 2
    intra_bandwidth: 150 GB/s
    nic_bandwidth: 100 Gbit/s
    nic_latency: 5 us
  - name: t
    type: T4
    devices: 4
    intra_bandwidth: 12 GB/s
    nic_bandwidth: 25 Gbit/s
  - name: s
    type: Small
    devices: 2
    intra_bandwidth: 12 GB/s
    nic_bandwidth: 25 Gbit/s
)yaml";

struct CellEstimatorTest : ::testing::Test {
  void SetUp() override {
    auto parsed = parseClusterSpec(kCluster, "tiny-mixed.yaml");
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    spec = std::move(*parsed);
    auto job = parseJobModel("mlp:layers=3;hidden=256;classes=10;batch=64");
    ASSERT_TRUE(bool(job)) << llvm::toString(job.takeError());
    auto opened = ModelGraphs::open(context, *job);
    ASSERT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
    model = std::move(*opened);
  }
  mlir::MLIRContext context;
  std::optional<ClusterSpec> spec;
  std::unique_ptr<ModelGraphs> model;
};
} // namespace

// The first Cell is synthesised in full, asked again it comes from the memo
// unchanged; later Cells take the fast mode, replaying the memoised plans.
TEST_F(CellEstimatorTest, MemoReuse) {
  CellEstimator estimator(*model, *spec, {});
  Cell first{{{"V100", 2}}, 1};
  auto a = estimator.estimate(first);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  ASSERT_TRUE(a->feasible) << a->reason;
  EXPECT_EQ(a->source, EstimateSource::Full);
  EXPECT_EQ(estimator.stats().fullSyntheses, 1u);
  EXPECT_GT(a->iterationSeconds, 0);
  EXPECT_NEAR(a->samplesPerSecond, 64 / a->iterationSeconds, 1e-9);
  EXPECT_GE(a->iterationSeconds, a->lowerBoundSeconds);
  EXPECT_TRUE(a->peakMemoryBytes.count("V100"));
  EXPECT_NE(estimator.calibration(), 1.0);

  auto again = estimator.estimate(first);
  ASSERT_TRUE(bool(again));
  EXPECT_TRUE(again->memoised);
  EXPECT_EQ(again->iterationSeconds, a->iterationSeconds);
  EXPECT_EQ(estimator.stats().memoHits, 1u);
  EXPECT_EQ(estimator.stats().fullSyntheses, 1u);

  for (const DeviceMultiset &devices :
       {DeviceMultiset{{"V100", 4}}, DeviceMultiset{{"V100", 2}, {"T4", 2}},
        DeviceMultiset{{"T4", 4}}}) {
    auto e = estimator.estimate({devices, 1});
    ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
    EXPECT_TRUE(e->feasible) << e->reason;
    EXPECT_EQ(e->source, EstimateSource::Fast);
  }
  EXPECT_EQ(estimator.stats().fastEstimates, 3u);
  EXPECT_EQ(estimator.stats().fullSyntheses, 1u);
  // Each fast Cell after the first replays the plans kept so far.
  EXPECT_GE(estimator.stats().replays, 2u);
}

// Full mode: every Cell synthesised; the fast mode's calibration Cell gives
// the same figure.
TEST_F(CellEstimatorTest, FullModeAgreesOnTheFirstCell) {
  CellOptions full;
  full.fast = false;
  CellEstimator slow(*model, *spec, full);
  CellEstimator quick(*model, *spec, {});
  Cell cell{{{"T4", 2}}, 1};
  auto a = slow.estimate(cell);
  auto b = quick.estimate(cell);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->iterationSeconds, b->iterationSeconds);
  auto c = slow.estimate({{{"T4", 4}}, 1});
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->source, EstimateSource::Full);
  EXPECT_EQ(slow.stats().fullSyntheses, 2u);
}

// 1 MB devices hold no plan: infeasible with the reason, in both modes.
TEST_F(CellEstimatorTest, InfeasibleReason) {
  for (bool fast : {false, true}) {
    CellOptions options;
    options.fast = fast;
    CellEstimator estimator(*model, *spec, options);
    if (fast) {
      auto warm = estimator.estimate({{{"V100", 1}}, 1});
      ASSERT_TRUE(warm && warm->feasible);
    }
    auto e = estimator.estimate({{{"Small", 2}}, 1});
    ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
    EXPECT_FALSE(e->feasible);
    EXPECT_NE(e->reason.find("memory"), std::string::npos) << e->reason;
    EXPECT_EQ(e->samplesPerSecond, 0);
  }
  // Devices the cluster lacks are bad input, not an estimate.
  CellEstimator estimator(*model, *spec, {});
  auto absent = estimator.estimate({{{"A100", 1}}, 1});
  ASSERT_FALSE(bool(absent));
  llvm::consumeError(absent.takeError());
}

// With pruning, a Cell is skipped only when its lower bound exceeds the
// fastest feasible Cell found; the others are estimated.
TEST_F(CellEstimatorTest, Pruning) {
  CellEstimator estimator(*model, *spec, {});
  std::vector<Cell> cells = enumerateCells(*spec, 1, false);
  auto all = estimator.estimateAll(cells, /*prune=*/true);
  ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
  ASSERT_EQ(all->size(), cells.size());
  double best = std::numeric_limits<double>::infinity();
  for (const CellEstimate &e : *all)
    if (e.feasible)
      best = std::min(best, e.iterationSeconds);
  for (const CellEstimate &e : *all) {
    EXPECT_EQ(e.cell, cells[&e - all->data()]);
    if (e.source == EstimateSource::Pruned)
      EXPECT_GT(e.lowerBoundSeconds, best);
  }
  EXPECT_EQ(estimator.stats().pruned + estimator.stats().fullSyntheses +
                estimator.stats().fastEstimates,
            cells.size());
}

// Two stages on two nodes of V100: a pipelined plan (synthesizePipeline)
// with its micro-batches; one node cannot hold two stages' groups.
TEST_F(CellEstimatorTest, PipelineStages) {
  CellEstimator estimator(*model, *spec, {});
  auto two = estimator.estimate({{{"V100", 4}}, 2});
  ASSERT_TRUE(bool(two)) << llvm::toString(two.takeError());
  EXPECT_TRUE(two->feasible) << two->reason;
  EXPECT_GT(two->microBatches, 1u);
  EXPECT_GT(two->iterationSeconds, 0);
  EXPECT_EQ(estimator.stats().pipelineSyntheses, 1u);
  auto again = estimator.estimate({{{"V100", 4}}, 2});
  ASSERT_TRUE(bool(again));
  EXPECT_TRUE(again->memoised);
  EXPECT_EQ(estimator.stats().pipelineSyntheses, 1u);
}
