//===- RelayoutTest.cpp - planRelayout on hand cases and at random --------===//

#include "weft/Spmd/Relayout.h"
#include "Graph/IR/GraphDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::spmd;

namespace {

/// A module with a mesh of 2 nodes × local [2, 2] (3 axes) and segments
/// 0: extent 8, 1: extent 8 (other ratios), 2: extent 6, 3: extent 4.
struct Fixture {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Fixture() {
    ctx.loadDialect<SpmdDialect, mlir::func::FuncDialect>();
    mlir::OpBuilder b(&ctx);
    module = mlir::ModuleOp::create(b.getUnknownLoc());
    auto cls = [&](llvm::StringRef name, llvm::ArrayRef<int64_t> nodes) {
      return DeviceClassAttr::get(&ctx, name, 1000, 1000,
                                  mlir::DenseI64ArrayAttr::get(&ctx, nodes));
    };
    auto mesh = MeshAttr::get(&ctx, mlir::DenseI64ArrayAttr::get(&ctx, {2, 2}),
                              b.getArrayAttr({cls("A", {0}), cls("B", {1})}));
    auto seg = [&](int64_t id, int64_t extent, llvm::ArrayRef<double> ratios,
                   llvm::ArrayRef<int64_t> sizes) -> mlir::Attribute {
      return SegmentAttr::get(&ctx, id, extent,
                              mlir::DenseF64ArrayAttr::get(&ctx, ratios),
                              mlir::DenseI64ArrayAttr::get(&ctx, sizes), 1);
    };
    (*module)->setAttr(SpmdDialect::kMeshAttr, mesh);
    (*module)->setAttr(
        SpmdDialect::kSegmentsAttr,
        b.getArrayAttr({seg(0, 8, {0.125, 0.125}, {1, 1, 1, 1, 1, 1, 1, 1}),
                        seg(1, 8, {0.25, 0.0}, {2, 2, 2, 2, 0, 0, 0, 0}),
                        seg(2, 6, {0.125, 0.125}, {1, 1, 1, 1, 1, 1, 0, 0}),
                        seg(3, 4, {0.125, 0.125}, {1, 0, 1, 0, 1, 0, 1, 0})}));
  }

  DistAttr dist(llvm::ArrayRef<AxisDist> axes) {
    return DistAttr::get(&ctx, axes);
  }

  /// Emits the steps in a function taking a value of `from` and returns
  /// whether the module verifies.
  bool emitsVerified(mlir::RankedTensorType type, DistAttr from,
                     llvm::ArrayRef<RelayoutStep> steps, std::string &error) {
    mlir::OpBuilder b(&ctx);
    b.setInsertionPointToEnd(module->getBody());
    auto func = b.create<mlir::func::FuncOp>(b.getUnknownLoc(), "f",
                                             b.getFunctionType({type}, {type}));
    func.setArgAttr(0, SpmdDialect::kDistAttr, from);
    mlir::Block *entry = func.addEntryBlock();
    b.setInsertionPointToEnd(entry);
    mlir::Value v =
        emitRelayout(b, b.getUnknownLoc(), entry->getArgument(0), steps);
    b.create<mlir::func::ReturnOp>(b.getUnknownLoc(), v);
    bool ok;
    {
      mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
        if (error.empty())
          error = d.str();
        return mlir::success();
      });
      ok = mlir::succeeded(mlir::verify(*module));
    }
    func.erase();
    return ok;
  }
};

AxisDist G(int64_t d, int64_t s) { return AxisDist::gather(d, s); }
AxisDist I() { return AxisDist::identity(); }
AxisDist S() { return AxisDist::sum(); }
AxisDist M() { return AxisDist::max(); }

std::string kinds(llvm::ArrayRef<RelayoutStep> steps) {
  std::string out;
  for (const RelayoutStep &s : steps)
    out += (out.empty() ? "" : " ") + toString(s.kind).str() + "@" +
           std::to_string(s.axis);
  return out;
}

/// The nesting rule: a step on axis a that adds or removes a split of dim d
/// needs every other axis splitting d (before and after) to be above a.
bool keepsNesting(const RelayoutStep &s) {
  AxisDist before = s.before.getAxes()[s.axis];
  AxisDist after = s.after.getAxes()[s.axis];
  for (int64_t d : {before.isGather() ? before.dim : int64_t(-1),
                    after.isGather() ? after.dim : int64_t(-1)}) {
    if (d < 0)
      continue;
    for (unsigned b = s.axis + 1; b < s.before.getAxes().size(); ++b)
      if ((s.before.getAxes()[b].isGather() && s.before.getAxes()[b].dim == d))
        return false;
  }
  return true;
}

std::string plan(Fixture &f, llvm::ArrayRef<AxisDist> from,
                 llvm::ArrayRef<AxisDist> to) {
  std::string why;
  auto steps = planRelayout(f.dist(from), f.dist(to), &why);
  if (mlir::failed(steps))
    return "error: " + why;
  return kinds(*steps);
}

TEST(RelayoutTest, SingleAxisKinds) {
  Fixture f;
  EXPECT_EQ(plan(f, {I(), I(), I()}, {I(), I(), I()}), "");
  EXPECT_EQ(plan(f, {I(), I(), I()}, {G(0, 0), I(), I()}), "shard@0");
  EXPECT_EQ(plan(f, {I(), G(1, 2), I()}, {I(), I(), I()}), "all_gather@1");
  EXPECT_EQ(plan(f, {I(), I(), S()}, {I(), I(), I()}), "all_reduce@2");
  EXPECT_EQ(plan(f, {M(), I(), I()}, {I(), I(), I()}), "all_reduce@0");
  EXPECT_EQ(plan(f, {I(), S(), I()}, {I(), G(0, 0), I()}), "reduce_scatter@1");
  EXPECT_EQ(plan(f, {G(0, 0), I(), I()}, {G(1, 2), I(), I()}), "all_to_all@0");
  EXPECT_EQ(plan(f, {G(0, 0), I(), I()}, {G(0, 1), I(), I()}),
            "all_gather@0 shard@0");
  EXPECT_EQ(plan(f, {M(), I(), I()}, {G(0, 0), I(), I()}),
            "all_reduce@0 shard@0");
  EXPECT_EQ(plan(f, {S(), I(), I()}, {S(), I(), I()}), "");
}

TEST(RelayoutTest, Impossible) {
  Fixture f;
  EXPECT_EQ(plan(f, {I(), I(), I()}, {S(), I(), I()}),
            "error: cannot turn id into sum on axis 0");
  EXPECT_EQ(plan(f, {G(0, 0), I(), I()}, {I(), M(), I()}),
            "error: cannot turn id into max on axis 1");
  EXPECT_EQ(plan(f, {S(), I(), I()}, {M(), I(), I()}),
            "error: cannot turn sum into max on axis 0");
  EXPECT_EQ(plan(f, {I(), I()}, {I(), I(), I()}),
            "error: distributions of 2 and 3 axes");
  EXPECT_EQ(plan(f, {G(0, 0), G(0, 1), I()}, {I(), I(), I()}),
            "error: axes splitting one dim with different segments");
}

TEST(RelayoutTest, NestedSplitsMinorFirst) {
  Fixture f;
  // Dim 0 on axes 0 and 2: gather the minor axis first.
  EXPECT_EQ(plan(f, {G(0, 0), I(), G(0, 0)}, {I(), I(), I()}),
            "all_gather@2 all_gather@0");
  // Adding a major split under an existing minor one re-gathers the minor.
  EXPECT_EQ(plan(f, {I(), G(0, 0), I()}, {G(0, 0), G(0, 0), I()}),
            "all_gather@1 shard@0 shard@1");
  // Removing a major split re-gathers and re-shards the minor one.
  EXPECT_EQ(plan(f, {G(0, 0), G(0, 0), I()}, {I(), G(0, 0), I()}),
            "all_gather@1 all_gather@0 shard@1");
  // A minor split joins below a kept major one directly.
  EXPECT_EQ(plan(f, {G(0, 0), I(), I()}, {G(0, 0), G(0, 0), I()}), "shard@1");
  // Moving the split of axis 1 to dim 1 while axis 0 keeps dim 0.
  EXPECT_EQ(plan(f, {G(0, 0), G(0, 0), I()}, {G(0, 0), G(1, 2), I()}),
            "all_to_all@1");
  // Re-segmenting a dim split on two axes: through whole.
  EXPECT_EQ(plan(f, {G(0, 0), G(0, 0), I()}, {G(0, 1), G(0, 1), I()}),
            "all_gather@1 all_gather@0 shard@0 shard@1");
}

TEST(RelayoutTest, RandomPairsVerifyAndKeepNesting) {
  Fixture f;
  std::mt19937 rng(1234);
  auto type =
      mlir::RankedTensorType::get({8, 6, 4}, mlir::Float32Type::get(&f.ctx));
  // Segments valid per dim: dim 0 → {0, 1}, dim 1 → {2}, dim 2 → {3}.
  auto randomDist = [&](bool allowPartial) {
    llvm::SmallVector<AxisDist, 3> axes;
    for (unsigned a = 0; a < 3; ++a) {
      int k = rng() % (allowPartial ? 6 : 5);
      if (k == 0 || k == 1)
        axes.push_back(I());
      else if (k == 2)
        axes.push_back(G(0, rng() % 2));
      else if (k == 3)
        axes.push_back(G(1, 2));
      else if (k == 4)
        axes.push_back(G(2, 3));
      else
        axes.push_back(rng() % 3 ? S() : M());
    }
    return f.dist(axes);
  };
  int planned = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    DistAttr from = randomDist(true), to = randomDist(i % 4 == 0);
    if (!isStructurallyValid(from) || !isStructurallyValid(to))
      continue;
    std::string why;
    auto steps = planRelayout(from, to, &why);
    bool possible = true;
    for (unsigned a = 0; a < 3; ++a)
      if (to.getAxes()[a].isPartial() && from.getAxes()[a] != to.getAxes()[a])
        possible = false;
    ASSERT_EQ(possible, mlir::succeeded(steps)) << why;
    if (mlir::failed(steps)) {
      ++failed;
      continue;
    }
    ++planned;
    if (from == to)
      EXPECT_TRUE(steps->empty());
    else
      ASSERT_FALSE(steps->empty());
    DistAttr cur = from;
    for (const RelayoutStep &s : *steps) {
      ASSERT_EQ(s.before, cur);
      ASSERT_TRUE(keepsNesting(s))
          << "step " << toString(s.kind).str() << "@" << s.axis;
      cur = s.after;
    }
    ASSERT_EQ(cur, to);
    std::string error;
    ASSERT_TRUE(f.emitsVerified(type, from, *steps, error)) << error;
  }
  EXPECT_GT(planned, 1000);
  EXPECT_GT(failed, 50);
}

} // namespace
