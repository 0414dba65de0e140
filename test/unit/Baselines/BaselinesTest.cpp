//===- BaselinesTest.cpp - DP-EV, DP-CP and TP-DP as plans ----------------===//

#include "weft/Baselines/Baselines.h"
#include "../Eval/EvalTestUtil.h"
#include "MlpGraph.h"
#include "mlir/IR/Verifier.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Spmd/SegmentTable.h"

using namespace weft;
using namespace weft::test;

namespace {

/// The toy cluster's two devices with a network so fast that every plan is
/// compute-bound.
ClusterSpec fastNetworkCluster() {
  std::string text = kToyCluster;
  text.replace(text.find("8 Gbit/s"), 8, "100000 Gbit/s");
  text.replace(text.find("10 us"), 5, "1 ns");
  auto spec = parseClusterSpec(text, "toy-fast.yaml");
  EXPECT_TRUE(bool(spec));
  return std::move(*spec);
}

TEST(BaselinesTest, ComputeProportionalBeatsEvenWhenComputeBound) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec spec = fastNetworkCluster();
  auto even = buildBaseline(BaselineKind::DPEven, *graph, spec, DType::FP32);
  auto prop = buildBaseline(BaselineKind::DPCompute, *graph, spec, DType::FP32);
  ASSERT_TRUE(bool(even)) << llvm::toString(even.takeError());
  ASSERT_TRUE(bool(prop)) << llvm::toString(prop.takeError());
  auto e = evaluatePlan(*even->plan, spec);
  auto p = evaluatePlan(*prop->plan, spec);
  ASSERT_TRUE(bool(e) && bool(p));
  EXPECT_LT(p->stepSeconds, e->stepSeconds);
  // Every op is linear in the rows a device holds and FLOP-bound, so the
  // compute maxima scale with the slowest device's rows / speed: even 32
  // rows on the 5 TFLOP/s device; proportional 43 rows (of 64·2/3 = 42.7)
  // on the 10 TFLOP/s device against 21 on the slow one.
  EXPECT_NEAR(e->computeSeconds / p->computeSeconds, (32.0 / 5) / (43.0 / 10),
              1e-9);
}

TEST(BaselinesTest, DataParallelPlanShape) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec spec = toyCluster();
  auto plan = buildBaseline(BaselineKind::DPCompute, *graph, spec, DType::FP32);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  mlir::ModuleOp m = *plan->plan;
  EXPECT_TRUE(mlir::succeeded(mlir::verify(m)));
  auto segments = m->getAttrOfType<mlir::ArrayAttr>("spmd.segments");
  ASSERT_TRUE(segments);
  auto batch = segments[0].cast<spmd::SegmentAttr>();
  EXPECT_EQ(batch.getExtent(), 64);
  // Ratios 10 : 5 TFLOP/s over one device each: 2/3 and 1/3.
  EXPECT_DOUBLE_EQ(batch.getRatios()[0], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(batch.getRatios()[1], 1.0 / 3.0);
  EXPECT_EQ(batch.getSizes().asArrayRef(), llvm::ArrayRef<int64_t>({43, 21}));
  EXPECT_TRUE(m->getAttrOfType<mlir::StringAttr>("spmd.fingerprint")
                  .getValue()
                  .startswith("sha256:"));
  unsigned locals = 0, parameters = 0, allReduces = 0;
  m.walk([&](mlir::Operation *op) {
    locals += llvm::isa<spmd::LocalOp>(op);
    parameters += llvm::isa<spmd::ParameterOp>(op);
    allReduces += llvm::isa<spmd::AllReduceOp>(op);
  });
  EXPECT_EQ(locals, 5u);
  EXPECT_EQ(parameters, 3u);
  // Only the loss's partial sums are added up (one per mesh axis).
  EXPECT_EQ(allReduces, 2u);
}

/// One node of four Fast devices.
ClusterSpec fourDeviceNode() {
  std::string text = kToyCluster;
  size_t nodes = text.find("nodes:");
  text = text.substr(0, nodes) +
         "nodes:\n  - {name: a, type: Fast, devices: 4, intra_bandwidth: 100 "
         "GB/s}\n";
  auto spec = parseClusterSpec(text, "toy-4.yaml");
  EXPECT_TRUE(bool(spec)) << (spec ? "" : llvm::toString(spec.takeError()));
  return std::move(*spec);
}

TEST(BaselinesTest, TensorParallelSplitsTheMatmulPair) {
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kMlp);
  ASSERT_TRUE(graph);
  ClusterSpec spec = fourDeviceNode();
  auto plan = buildBaseline(BaselineKind::TPDP, *graph, spec, DType::FP32);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  mlir::ModuleOp m = *plan->plan;
  EXPECT_EQ(plan->strategy, "tensor parallel x4 in nodes, data parallel x1");
  auto mesh = m->getAttrOfType<spmd::MeshAttr>("spmd.mesh");
  EXPECT_EQ(mesh.getLocal().asArrayRef(), llvm::ArrayRef<int64_t>({1, 4}));
  llvm::StringMap<std::string> dists;
  m.walk([&](spmd::ParameterOp p) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << p.getDist();
    dists[p.getName()] = os.str();
  });
  // No head-free MLP has heads: the first matmul's weight and bias split by
  // columns, the second's weight by rows, on the tensor-parallel axis.
  EXPECT_EQ(dists["l0.weight"], "#spmd.dist<[id, id, gather(1, 1)]>");
  EXPECT_EQ(dists["l0.bias"], "#spmd.dist<[id, id, gather(0, 1)]>");
  EXPECT_EQ(dists["l1.weight"], "#spmd.dist<[id, id, gather(0, 1)]>");
  // The row-split matmul leaves partial sums added up on the TP axis.
  bool reduced = false;
  m.walk([&](spmd::AllReduceOp op) { reduced |= op.getAxis() == 2; });
  EXPECT_TRUE(reduced);
  auto estimate = evaluatePlan(m, spec);
  ASSERT_TRUE(bool(estimate)) << llvm::toString(estimate.takeError());
  // Every device holds a quarter of l0.weight (the largest tensor).
  EXPECT_LT(estimate->memory[0].terms.parameters, 4.0 * 1024 * 1024 / 2);
}

TEST(SegmentTableTest, LargestRemainder) {
  using spmd::largestRemainder;
  EXPECT_EQ(largestRemainder({42.67, 21.33}, 64),
            (std::vector<int64_t>{43, 21}));
  EXPECT_EQ(largestRemainder({0.75, 0.75, 0.75, 0.75}, 3),
            (std::vector<int64_t>{1, 1, 1, 0}));
}

} // namespace
