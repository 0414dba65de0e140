//===- FromPlanTest.cpp - The LP prices what the evaluator prices ---------===//
//
// Baseline plans (DP-EV, DP-CP, TP-DP) of small zoo models on 2- and 3-class
// clusters (one with two classes of one device type): for random ratios, the
// objective of ratioProblemFromPlan at those ratios equals evaluatePlan's step
// time of the plan with those ratios written in (applyRatios); the LP's ratios
// are no worse than the baseline's; integer sizes verify and are priced
// conservatively.
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/RatioFromPlan.h"
#include "EvalTestUtil.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Eval/PlanRatios.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/SolveRatios.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::ratio;

namespace {

/// 2 V100 nodes of 2 and 3 P100 nodes of 2 (hap-style, 10.4 Gbit/s NICs).
const char *kTwoClasses = R"(
name: two-classes
defaults:
  nic_bandwidth: 10.4 Gbit/s
  nic_latency: 50 us
  intra_latency: 5 us
nodes:
  - name: v100-node
    count: 2
    type: V100
    devices: 2
    intra_bandwidth: 150 GB/s
  - name: p100-node
    count: 3
    type: P100
    devices: 2
    intra_bandwidth: 80 GB/s
)";

/// Three classes with different NICs and node sizes of 4.
const char *kThreeClasses = R"(
name: three-classes
defaults:
  intra_latency: 5 us
nodes:
  - name: a100-node
    count: 1
    type: A100
    devices: 4
    intra_bandwidth: 300 GB/s
    nic_bandwidth: 200 Gbit/s
    nic_latency: 5 us
  - name: v100-node
    count: 1
    type: V100
    devices: 4
    intra_bandwidth: 150 GB/s
    nic_bandwidth: 100 Gbit/s
    nic_latency: 5 us
  - name: t4-node
    count: 2
    type: T4
    devices: 4
    intra_bandwidth: 12 GB/s
    nic_bandwidth: 25 Gbit/s
    nic_latency: 20 us
)";

/// Two classes of one device type (V100 nodes with fast and slow NICs): the
/// pricer must not share an op's forms between devices of one type in
/// different classes.
const char *kOneTypeTwoClasses = R"(
name: one-type-two-classes
defaults:
  intra_latency: 5 us
nodes:
  - name: fast-nic
    count: 1
    type: V100
    devices: 2
    intra_bandwidth: 150 GB/s
    nic_bandwidth: 100 Gbit/s
    nic_latency: 5 us
  - name: slow-nic
    count: 2
    type: V100
    devices: 2
    intra_bandwidth: 150 GB/s
    nic_bandwidth: 10 Gbit/s
    nic_latency: 50 us
)";

mlir::OwningOpRef<mlir::ModuleOp>
importZoo(mlir::MLIRContext &context, zoo::ZooOptions options, int64_t batch) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("weft-ratio", "onnx", path))
    return {};
  auto written = zoo::writeZooModel(options, path);
  EXPECT_TRUE(bool(written)) << llvm::toString(written.takeError());
  ImportOptions import;
  import.batch = batch;
  auto imported = importOnnxFile(context, path, import);
  llvm::sys::fs::remove(path);
  if (!imported) {
    ADD_FAILURE() << llvm::toString(imported.takeError());
    return {};
  }
  return std::move(*imported);
}

zoo::ZooOptions tinyBert() {
  zoo::ZooOptions o = zoo::defaultZooOptions(zoo::ZooModelKind::Bert);
  o.layers = 2;
  o.hidden = 64;
  o.heads = 4;
  o.seq = 16;
  o.vocab = 100;
  o.ffn = 128;
  return o;
}

zoo::ZooOptions tinyMlp() {
  zoo::ZooOptions o = zoo::defaultZooOptions(zoo::ZooModelKind::Mlp);
  o.layers = 3;
  o.hidden = 256;
  return o;
}

/// Random ratios on which every share is a whole number of base elements
/// (so the evaluator's rounding of ratio × extent is exact) and every class
/// holds something.
Ratios latticeRatios(const RatioProblem &p, std::mt19937 &rng) {
  Ratios out;
  for (const Segment &s : p.segments) {
    std::vector<double> r(p.classes.size(), 0);
    for (int attempt = 0; attempt < 10000; ++attempt) {
      int64_t left = s.extent;
      std::vector<int64_t> k(p.classes.size());
      bool ok = true;
      for (unsigned c = 0; c + 1 < p.classes.size() && ok; ++c) {
        int64_t most = (left - 1) / p.classes[c].count;
        if (most < 1) {
          ok = false;
          break;
        }
        k[c] = std::uniform_int_distribution<int64_t>(1, most)(rng);
        left -= k[c] * p.classes[c].count;
      }
      unsigned last = p.classes.size() - 1;
      if (!ok || left < 1 || left % p.classes[last].count)
        continue;
      k[last] = left / p.classes[last].count;
      for (unsigned c = 0; c < p.classes.size(); ++c)
        r[c] = double(k[c]) / double(s.extent);
      break;
    }
    out.push_back(r);
  }
  return out;
}

struct Case {
  const char *cluster;
  zoo::ZooOptions model;
  int64_t batch;
};

class FromPlanTest : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override { registerImportDialects(context); }
  mlir::MLIRContext context;
};

std::vector<Case> cases() {
  return {{kTwoClasses, tinyBert(), 400},
          {kThreeClasses, tinyBert(), 640},
          {kTwoClasses, tinyMlp(), 1200},
          {kThreeClasses, tinyMlp(), 960},
          {kOneTypeTwoClasses, tinyMlp(), 600}};
}

double relErr(double a, double b) {
  return std::fabs(a - b) / std::max(1e-12, std::fabs(b));
}

/// At random lattice ratios written into `plan`, the problem's objective
/// equals the evaluator's step time, and its memory rows the classes'
/// peaks; at the plan's own ratios too when nothing was linearised.
void expectPricedLikeTheEvaluator(mlir::ModuleOp plan, const ClusterSpec &spec,
                                  std::mt19937 &rng) {
  EvalOptions options;
  auto problem = ratioProblemFromPlan(plan, spec, options);
  ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
  ASSERT_FALSE(problem->segments.empty());
  auto own = planRatios(plan);
  ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
  for (int trial = 0; trial < 4; ++trial) {
    Ratios r = latticeRatios(*problem, rng);
    // Segments too short for a lattice point keep the plan's ratios.
    for (unsigned k = 0; k < r.size(); ++k)
      if (llvm::all_of(r[k], [](double x) { return x == 0; }))
        r[k] = (*own)[k];
    mlir::OwningOpRef<mlir::ModuleOp> moved(plan.clone());
    if (llvm::Error err = applyRatios(*moved, r))
      FAIL() << llvm::toString(std::move(err));
    ASSERT_TRUE(succeeded(mlir::verify(*moved)));
    auto estimate = evaluatePlan(*moved, spec, options);
    ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
    // The problem built at the moved plan prices exactly what the
    // evaluator prices there.
    auto here = ratioProblemFromPlan(*moved, spec, options);
    ASSERT_TRUE(bool(here)) << llvm::toString(here.takeError());
    // (Gradient accumulation: the objective is per micro-batch.)
    double scale = here->objectiveScale;
    EXPECT_EQ(scale, double(spmd::SpmdDialect::getMicroBatches(plan)));
    EXPECT_LT(
        relErr(scale * evaluateObjective(*here, r), estimate->stepSeconds),
        1e-6)
        << "objective " << evaluateObjective(*here, r) << " s x " << scale
        << ", evaluator " << estimate->stepSeconds << " s";
    // The problem built at the plan's ratios is the same function when
    // nothing was linearised.
    if (!problem->linearized)
      EXPECT_LT(
          relErr(scale * evaluateObjective(*problem, r), estimate->stepSeconds),
          1e-6);
    // Memory rows: the class's largest peak (classes are named
    // "<type>#<class id>").
    for (unsigned k = 0; k < here->classes.size(); ++k) {
      double peak = 0;
      for (const DeviceMemoryEstimate &m : estimate->memory)
        if (here->classes[k].name ==
            m.type + "#" + std::to_string(spec.classOf(m.clusterDevice).id))
          peak = std::max(peak, m.peakBytes());
      EXPECT_LT(relErr(evaluateMemory(*here, k, r, r), peak), 1e-6);
    }
  }
}

/// Builds every baseline of case `index`, the graph run as `micro`
/// micro-batches (the attribute reaches the plans), and calls
/// `check(plan, spec)` on each under a trace naming the baseline.
void forEachBaseline(
    mlir::MLIRContext &context, int index, int64_t micro,
    llvm::function_ref<void(mlir::ModuleOp, const ClusterSpec &)> check) {
  Case c = cases()[index];
  auto spec = parseClusterSpec(c.cluster, "test.yaml");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  auto graph = importZoo(context, c.model, c.batch);
  ASSERT_TRUE(graph);
  if (micro > 1)
    (*graph)->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                      mlir::Builder(&context).getI64IntegerAttr(micro));
  for (BaselineKind kind : allBaselines()) {
    SCOPED_TRACE(baselineName(kind).str());
    auto built = buildBaseline(kind, *graph, *spec, DType::FP32);
    ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
    ASSERT_EQ(spmd::SpmdDialect::getMicroBatches(*built->plan), micro);
    check(*built->plan, *spec);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

/// expectPricedLikeTheEvaluator on every baseline of case `index`.
void expectBaselinesPricedLikeTheEvaluator(mlir::MLIRContext &context,
                                           int index, int64_t micro,
                                           unsigned seed) {
  std::mt19937 rng(seed + index);
  forEachBaseline(context, index, micro,
                  [&](mlir::ModuleOp plan, const ClusterSpec &spec) {
                    expectPricedLikeTheEvaluator(plan, spec, rng);
                  });
}

TEST_P(FromPlanTest, ObjectiveEqualsEvaluator) {
  expectBaselinesPricedLikeTheEvaluator(context, GetParam(), 1, 1234);
}

/// Gradient accumulation over 3 micro-batches: the graph's
/// `spmd.micro_batches` reaches the baselines' plans, and the objective
/// times the problem's scale is the evaluator's step time (compute and
/// per-micro-batch communication 3 times, whole-gradient sync and the
/// optimizer once).
TEST_P(FromPlanTest, AccumulatedObjectiveEqualsEvaluator) {
  expectBaselinesPricedLikeTheEvaluator(context, GetParam(), 3, 4321);
}

/// A softmax split along its reduced dim (all-reduces inside its recipe,
/// which no baseline has): the LP prices them as the evaluator does.
TEST(FromPlanRecipeTest, RecipeAllReducesPricedLikeTheEvaluator) {
  mlir::MLIRContext ctx;
  ClusterSpec spec = test::toyCluster();
  auto plan = test::parsePlan(
      ctx, test::splitSoftmaxPlan("softmax.split-reduced, softmax.replicate"));
  ASSERT_TRUE(plan);
  auto problem = ratioProblemFromPlan(*plan, spec, EvalOptions());
  ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
  for (double fast : {0.75, 0.5, 0.2}) {
    Ratios r{{fast, 1 - fast}};
    mlir::OwningOpRef<mlir::ModuleOp> moved(plan->clone());
    ASSERT_FALSE(bool(applyRatios(*moved, r)));
    auto estimate = evaluatePlan(*moved, spec);
    ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
    // Three all-reduces of 32 B between the nodes (EvaluatorTest).
    EXPECT_GT(estimate->commSeconds, 3 * 2e-5);
    EXPECT_LT(relErr(evaluateObjective(*problem, r), estimate->stepSeconds),
              1e-9);
  }
}

TEST_P(FromPlanTest, LpRatiosAreNoWorseAndIntegerSizesVerify) {
  EvalOptions options;
  forEachBaseline(
      context, GetParam(), 1,
      [&](mlir::ModuleOp plan, const ClusterSpec &spec) {
        auto problem = ratioProblemFromPlan(plan, spec, options);
        ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
        auto at = planRatios(plan);
        ASSERT_TRUE(bool(at));
        auto solution = solveRatios(*problem);
        ASSERT_TRUE(bool(solution)) << llvm::toString(solution.takeError());
        EXPECT_LE(solution->objectiveSeconds,
                  evaluateObjective(*problem, *at) * (1 + 1e-9));
        // Continuous ratios written back: the evaluator agrees up to the
        // rounding of ratio × extent to whole elements.
        mlir::OwningOpRef<mlir::ModuleOp> moved(plan.clone());
        ASSERT_FALSE(bool(applyRatios(*moved, solution->ratios)));
        ASSERT_TRUE(succeeded(mlir::verify(*moved)));
        // Integer sizes: verify, and the evaluator's step time is at most the
        // integer cost (which reads every device of a class at its largest
        // share).
        auto sizes = integerize(*problem, *solution);
        ASSERT_TRUE(bool(sizes)) << llvm::toString(sizes.takeError());
        EXPECT_FALSE(bool(checkIntegerPlan(*problem, *sizes)));
        ASSERT_FALSE(bool(applyRatios(*moved, solution->ratios, &*sizes)));
        ASSERT_TRUE(succeeded(mlir::verify(*moved)));
        auto estimate = evaluatePlan(*moved, spec, options);
        ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
        EXPECT_LE(estimate->stepSeconds, sizes->integerCost * (1 + 1e-6));
        EXPECT_GE(sizes->integerCost, sizes->continuousCost * (1 - 1e-9));
      });
}

/// assignRatios at its own answer changes nothing (the pass is
/// idempotent), on every baseline of every case.
TEST_P(FromPlanTest, SecondAssignmentChangesNothing) {
  EvalOptions options;
  unsigned changedFirst = 0;
  forEachBaseline(context, GetParam(), 1,
                  [&](mlir::ModuleOp plan, const ClusterSpec &spec) {
                    auto first = assignRatios(plan, spec, options);
                    ASSERT_TRUE(bool(first))
                        << llvm::toString(first.takeError());
                    changedFirst += first->changed;
                    auto before = planRatios(plan);
                    ASSERT_TRUE(bool(before));
                    auto second = assignRatios(plan, spec, options);
                    ASSERT_TRUE(bool(second))
                        << llvm::toString(second.takeError());
                    EXPECT_FALSE(second->changed);
                    EXPECT_EQ(second->afterSeconds, second->beforeSeconds);
                    auto after = planRatios(plan);
                    ASSERT_TRUE(bool(after));
                    EXPECT_EQ(*after, *before);
                  });
  // The first assignment moves the baselines' speed-proportional ratios
  // (with one device type they are already the LP's).
  if (cases()[GetParam()].cluster != kOneTypeTwoClasses)
    EXPECT_GE(changedFirst, 1u);
}

/// On the 2-class cluster the plan's one moved segment has one free ratio:
/// the LP optimum of the plan's problem matches a fine grid search over it,
/// and the evaluator agrees at the lattice points of the grid.
TEST_P(FromPlanTest, LpMatchesGridSearchOnPlans) {
  Case c = cases()[GetParam()];
  if (c.cluster != kTwoClasses)
    GTEST_SKIP() << "one free ratio only on the 2-class cluster";
  auto spec = parseClusterSpec(c.cluster, "test.yaml");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  auto graph = importZoo(context, c.model, c.batch);
  ASSERT_TRUE(graph);
  EvalOptions options;
  for (BaselineKind kind : {BaselineKind::DPEven, BaselineKind::DPCompute}) {
    SCOPED_TRACE(baselineName(kind).str());
    auto built = buildBaseline(kind, *graph, *spec, DType::FP32);
    ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
    auto problem = ratioProblemFromPlan(*built->plan, *spec, options);
    ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
    ASSERT_EQ(problem->segments.size(), 1u);
    ASSERT_EQ(problem->classes.size(), 2u);
    auto solution = solveRatios(*problem);
    ASSERT_TRUE(bool(solution)) << llvm::toString(solution.takeError());
    double n0 = problem->classes[0].count, n1 = problem->classes[1].count;
    const int steps = 4000;
    double best = std::numeric_limits<double>::infinity(), slope = 0,
           previous = 0;
    for (int i = 0; i <= steps; ++i) {
      double r0 = (1 / n0) * i / steps;
      Ratios r{{r0, (1 - n0 * r0) / n1}};
      double v = evaluateObjective(*problem, r);
      if (i > 0)
        slope = std::max(slope, std::fabs(v - previous));
      previous = v;
      best = std::min(best, v);
    }
    // The LP's ratios are as good as the grid's best within one grid step
    // (the LP's own value is within 0.5 % of the true objective at them:
    // GLPK's presolve and absolute tolerances on microsecond rows,
    // docs/Ratios.md).
    double atLp = evaluateObjective(*problem, solution->ratios);
    EXPECT_LE(atLp, best + slope);
    EXPECT_NEAR(atLp, solution->objectiveSeconds, 5e-3 * best);
    EXPECT_LE(solution->objectiveSeconds, best * (1 + 1e-9));
    // Lattice points (whole samples per device) scored by the evaluator.
    int64_t extent = problem->segments[0].extent;
    for (int64_t k0 = 1; k0 * n0 < extent; k0 += 3) {
      int64_t left = extent - k0 * int64_t(n0);
      if (left % int64_t(n1))
        continue;
      Ratios r{{double(k0) / extent, double(left / int64_t(n1)) / extent}};
      mlir::OwningOpRef<mlir::ModuleOp> moved(built->plan->clone());
      ASSERT_FALSE(bool(applyRatios(*moved, r)));
      auto estimate = evaluatePlan(*moved, *spec, options);
      ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
      EXPECT_LE(solution->objectiveSeconds, estimate->stepSeconds * (1 + 1e-9));
    }
  }
}

/// The evaluator and the ratio problem give the same figures whether
/// devices are folded into orbits (MeshLayout::representatives) or priced
/// one by one, on every baseline at its own ratios and with the LP's
/// integer sizes written in (uneven shards within a class); some baseline's
/// layout does fold (one whose sizes differ between nodes of a class does
/// not: TP-DP's on the last case).
TEST_P(FromPlanTest, FoldingDevicesChangesNoFigure) {
  EvalOptions folded, unfolded;
  unfolded.foldDevices = false;
  auto expectSameFigures = [&](mlir::ModuleOp plan, const ClusterSpec &spec) {
    auto a = evaluatePlan(plan, spec, folded);
    auto b = evaluatePlan(plan, spec, unfolded);
    ASSERT_TRUE(a && b);
    EXPECT_DOUBLE_EQ(a->stepSeconds, b->stepSeconds);
    EXPECT_DOUBLE_EQ(a->commSeconds, b->commSeconds);
    EXPECT_DOUBLE_EQ(a->optimizerSeconds, b->optimizerSeconds);
    EXPECT_EQ(a->timedOps, b->timedOps);
    ASSERT_EQ(a->memory.size(), b->memory.size());
    for (auto [x, y] : llvm::zip(a->memory, b->memory)) {
      EXPECT_EQ(x.clusterDevice, y.clusterDevice);
      EXPECT_DOUBLE_EQ(x.peakBytes(), y.peakBytes()) << "device " << x.device;
    }
    auto pa = ratioProblemFromPlan(plan, spec, folded);
    auto pb = ratioProblemFromPlan(plan, spec, unfolded);
    ASSERT_TRUE(pa && pb);
    auto at = planRatios(plan);
    ASSERT_TRUE(bool(at));
    EXPECT_LT(relErr(evaluateObjective(*pa, *at), evaluateObjective(*pb, *at)),
              1e-12);
    for (unsigned k = 0; k < pa->classes.size(); ++k)
      EXPECT_LT(relErr(evaluateMemory(*pa, k, *at, *at),
                       evaluateMemory(*pb, k, *at, *at)),
                1e-12);
  };
  unsigned folding = 0;
  forEachBaseline(
      context, GetParam(), 1,
      [&](mlir::ModuleOp plan, const ClusterSpec &spec) {
        auto layout = MeshLayout::get(plan, spec);
        ASSERT_TRUE(bool(layout)) << llvm::toString(layout.takeError());
        folding += layout->representatives().size() < layout->numDevices();
        {
          SCOPED_TRACE("own ratios");
          expectSameFigures(plan, spec);
        }
        auto problem = ratioProblemFromPlan(plan, spec, folded);
        ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
        auto solution = solveRatios(*problem);
        ASSERT_TRUE(bool(solution)) << llvm::toString(solution.takeError());
        auto sizes = integerize(*problem, *solution);
        ASSERT_TRUE(bool(sizes)) << llvm::toString(sizes.takeError());
        mlir::OwningOpRef<mlir::ModuleOp> sized(plan.clone());
        ASSERT_FALSE(bool(applyRatios(*sized, solution->ratios, &*sizes)));
        SCOPED_TRACE("integer sizes");
        expectSameFigures(*sized, spec);
      });
  EXPECT_GT(folding, 0u);
}

INSTANTIATE_TEST_SUITE_P(Clusters, FromPlanTest, ::testing::Range(0, 5));

} // namespace
