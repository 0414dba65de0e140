//===- RandomPlanTest.cpp - Every generated plan builds and verifies ------===//

#include "weft/Spmd/RandomPlan.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::spmd;

namespace {

TEST(RandomPlanTest, MeshesHaveTwoToEightDevices) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<SpmdDialect>();
  bool multiDeviceNodes = false, heterogeneous = false, twoLocal = false;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    MeshAttr mesh = randomMesh(&ctx, seed);
    ASSERT_GE(mesh.getNumDevices(), 2) << "seed " << seed;
    ASSERT_LE(mesh.getNumDevices(), 8) << "seed " << seed;
    multiDeviceNodes |= mesh.getDevicesPerNode() > 1;
    heterogeneous |= mesh.getClasses().size() > 1;
    twoLocal |= mesh.getLocal().size() == 2;
  }
  EXPECT_TRUE(multiDeviceNodes && heterogeneous && twoLocal);
}

TEST(RandomPlanTest, EveryGeneratedPlanVerifies) {
  int zeroRatios = 0, zeroSizes = 0, unitSizes = 0, uneven = 0, splitOps = 0,
      partialOps = 0, collectives = 0;
  std::set<std::string> variantsSeen;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    mlir::MLIRContext ctx;
    ctx.loadDialect<SpmdDialect>();
    auto graph = randomGraphProgram(&ctx, seed);
    ASSERT_TRUE(graph) << "seed " << seed << ":\n"
                       << randomGraphProgramText(seed);
    MeshAttr mesh = randomMesh(&ctx, seed * 7 + 1);
    auto plan = randomPlan(*graph, mesh, seed);
    ASSERT_TRUE(bool(plan))
        << "seed " << seed << ": " << llvm::toString(plan.takeError()) << "\n"
        << randomGraphProgramText(seed);
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*plan->plan))) << "seed " << seed;
    auto main = graph->lookupSymbol<mlir::func::FuncOp>("main");
    EXPECT_EQ(plan->choice.ops.size(), planOps(main).size());
    for (SegmentAttr s : plan->choice.segments) {
      zeroRatios += llvm::is_contained(s.getRatios().asArrayRef(), 0.0);
      for (int64_t size : s.getSizes().asArrayRef()) {
        zeroSizes += size == 0;
        unitSizes += size == 1;
      }
      uneven += s.getExtent() % mesh.getNumDevices() != 0;
    }
    plan->plan->walk([&](mlir::Operation *op) {
      if (auto local = llvm::dyn_cast<LocalOp>(op)) {
        llvm::StringRef v = local.getVariant();
        llvm::SmallVector<llvm::StringRef> names;
        v.split(names, ", ");
        for (llvm::StringRef n : names)
          variantsSeen.insert(n.str());
        splitOps += !v.contains(".replicate") || names.size() > 1;
        partialOps += v.contains("partial") || v.contains("contraction");
      } else if (op->getDialect() &&
                 op->getDialect()->getNamespace() == "spmd" &&
                 !llvm::isa<ParameterOp, LocalOp, YieldOp>(op)) {
        ++collectives;
      }
    });
  }
  // The generator covers what issue 6 asks for.
  EXPECT_GT(zeroRatios, 20); // a whole device class holds nothing
  EXPECT_GT(zeroSizes, 100);
  EXPECT_GT(unitSizes, 100);
  EXPECT_GT(uneven, 100);
  EXPECT_GT(partialOps, 20);
  EXPECT_GT(collectives, 300);
  for (const char *v :
       {"matmul.split-contraction", "softmax.split-reduced",
        "layer_norm.split-normalized", "gather.split-vocab",
        "reshape.split-group", "transpose.split", "reduce_mean.split-reduced",
        "cross_entropy.split-classes", "cross_entropy.split-batch",
        "add.partial-once"})
    EXPECT_TRUE(variantsSeen.count(v)) << v;
}

/// Arbitrary (mostly invalid) choices: any variant per axis, any segment id,
/// wrong variant counts. buildProgram must either build a plan that verifies
/// or return an error — never crash.
TEST(RandomPlanTest, ArbitraryChoicesErrorOrVerify) {
  int built = 0, rejected = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    mlir::MLIRContext ctx;
    ctx.loadDialect<SpmdDialect>();
    auto graph = randomGraphProgram(&ctx, seed);
    MeshAttr mesh = randomMesh(&ctx, seed + 11);
    auto plan = randomPlan(*graph, mesh, seed);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    PlanChoice choice = plan->choice;
    std::mt19937_64 rng(seed);
    auto main = graph->lookupSymbol<mlir::func::FuncOp>("main");
    std::vector<mlir::Operation *> ops = planOps(main);
    for (size_t k = 0; k < ops.size(); ++k) {
      if (rng() % 3)
        continue;
      auto variants = shardingVariantsOf(ops[k]);
      OpChoice &c = choice.ops[k];
      for (size_t a = 0; a < c.variants.size(); ++a) {
        c.variants[a] = variants[rng() % variants.size()];
        c.segments[a] = int64_t(rng() % (choice.segments.size() + 2)) - 1;
      }
      if (rng() % 10 == 0)
        c.variants.pop_back();
    }
    if (rng() % 10 == 0 && !choice.arguments.empty())
      choice.arguments[0] =
          DistAttr::get(&ctx, llvm::SmallVector<AxisDist>(mesh.getNumAxes(),
                                                          AxisDist::sum()));
    auto result = buildProgram(*graph, choice);
    if (result) {
      ++built;
      EXPECT_TRUE(mlir::succeeded(mlir::verify(**result))) << "seed " << seed;
    } else {
      ++rejected;
      std::string msg = llvm::toString(result.takeError());
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  EXPECT_GT(built, 10);
  EXPECT_GT(rejected, 100);
}

} // namespace
