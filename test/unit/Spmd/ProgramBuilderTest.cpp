//===- ProgramBuilderTest.cpp - Plans from per-axis rule variants ---------===//

#include "weft/Spmd/ProgramBuilder.h"
#include "Graph/IR/GraphDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::spmd;

namespace {

const char *kMlp = R"(
func.func @main(%x: tensor<8x6xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %w1 = graph.parameter "w1" : tensor<6x4xf32>
  %b1 = graph.parameter "b1" : tensor<4xf32>
  %h = graph.matmul %x, %w1 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %hb = graph.add %h, %b1 : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = graph.relu %hb : tensor<8x4xf32>
  %w2 = graph.parameter "w2" : tensor<4x3xf32>
  %o = graph.matmul %r, %w2 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %l = graph.cross_entropy %o, %y {reduction = "mean"} : (tensor<8x3xf32>, tensor<8xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
)";

struct Fixture {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> graph;
  mlir::func::FuncOp main;
  PlanChoice choice;
  std::unique_ptr<SegmentTable> table;

  /// 2 nodes (classes A, B) × local [2]: 2 axes, 4 devices.
  Fixture() {
    ctx.loadDialect<graph::GraphDialect, SpmdDialect,
                    mlir::func::FuncDialect>();
    graph = mlir::parseSourceString<mlir::ModuleOp>(kMlp, &ctx);
    main = graph->lookupSymbol<mlir::func::FuncOp>("main");
    mlir::Builder b(&ctx);
    auto cls = [&](llvm::StringRef name, llvm::ArrayRef<int64_t> nodes) {
      return DeviceClassAttr::get(&ctx, name, 1000, 1000,
                                  mlir::DenseI64ArrayAttr::get(&ctx, nodes));
    };
    choice.mesh = MeshAttr::get(&ctx, mlir::DenseI64ArrayAttr::get(&ctx, {2}),
                                b.getArrayAttr({cls("A", {0}), cls("B", {1})}));
    table = std::make_unique<SegmentTable>(&ctx, MeshShape::of(choice.mesh));
  }

  graph::ShardingVariant variant(mlir::Operation *op, llvm::StringRef name) {
    for (const auto &v : shardingVariantsOf(op))
      if (v.name == name)
        return v;
    ADD_FAILURE() << "no variant " << name.str();
    return {};
  }
  /// Op k with these per-axis variants and segments; among variants of one
  /// name (add.split exists per result dim) the first whose split dims fit
  /// the segments.
  void choose(size_t k, llvm::ArrayRef<llvm::StringRef> names,
              llvm::ArrayRef<int64_t> segs) {
    mlir::Operation *op = planOps(main)[k];
    OpChoice c;
    c.segments.assign(segs.begin(), segs.end());
    for (auto [a, n] : llvm::enumerate(names)) {
      c.variants.push_back(variant(op, n));
      for (const auto &v : shardingVariantsOf(op)) {
        if (v.name != n || a >= segs.size())
          continue;
        OpChoice one;
        one.variants.assign(
            names.size(),
            variant(op, (op->getName().stripDialect() + ".replicate").str()));
        one.variants[a] = v;
        one.segments.assign(names.size(), segs[a]);
        auto d = deriveDists(op, one, *table);
        if (d) {
          c.variants[a] = v;
          break;
        }
        llvm::consumeError(d.takeError());
      }
    }
    if (choice.ops.size() <= k)
      choice.ops.resize(k + 1);
    choice.ops[k] = c;
  }
  DistAttr dist(llvm::ArrayRef<AxisDist> axes) {
    return DistAttr::get(&ctx, axes);
  }
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> build() {
    choice.segments.assign(table->all().begin(), table->all().end());
    return buildProgram(*graph, choice);
  }
};

std::string printed(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os);
  return s;
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

TEST(ProgramBuilderTest, DataParallelOverBothAxes) {
  Fixture f;
  // Batch 8 split 3 : 3 : 1 : 1 (class A holds 3/8 per device).
  int64_t batch = f.table->get(8, {0.375, 0.125}, 0b11);
  EXPECT_EQ(f.table->at(batch).getSizes().asArrayRef(),
            llvm::ArrayRef<int64_t>({3, 3, 1, 1}));
  AxisDist g = AxisDist::gather(0, batch);
  f.choice.arguments = {f.dist({g, g}), f.dist({g, g})};
  f.choose(0, {"matmul.split-rows", "matmul.split-rows"}, {batch, batch});
  f.choose(1, {"add.split", "add.split"}, {batch, batch});
  f.choose(2, {"relu.split", "relu.split"}, {batch, batch});
  f.choose(3, {"matmul.split-rows", "matmul.split-rows"}, {batch, batch});
  f.choose(4, {"cross_entropy.split-batch", "cross_entropy.split-batch"},
           {batch, batch});
  auto plan = f.build();
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  std::string text = printed(**plan);
  EXPECT_EQ(count(text, "spmd.local"), 5u);
  EXPECT_EQ(count(text, "spmd.all_reduce"), 2u) << text;
  EXPECT_EQ(count(text, "spmd.all_gather"), 0u);
  EXPECT_NE(text.find("variant = \"matmul.split-rows, matmul.split-rows\""),
            std::string::npos);
  EXPECT_NE(text.find("spmd.fingerprint = \"sha256:"), std::string::npos);
}

TEST(ProgramBuilderTest, TensorParallelInsertsCollectives) {
  Fixture f;
  int64_t hidden = f.table->get(4, {0.25, 0.25}, 0b10);
  int64_t batch = f.table->get(8, {0.5, 0.0}, 0b01); // class B holds 0
  AxisDist g = AxisDist::gather(0, batch);
  f.choice.arguments = {f.dist({g, AxisDist::identity()}),
                        f.dist({g, AxisDist::identity()})};
  f.choice.parameters["w1"] = {
      f.dist({AxisDist::identity(), AxisDist::gather(1, hidden)}),
      ParamStrategy::Replicated};
  f.choice.parameters["w2"] = {
      f.dist({AxisDist::gather(0, f.table->get(4, {0.5, 0.0}, 0b01)),
              AxisDist::identity()}),
      ParamStrategy::Zero3};
  f.choose(0, {"matmul.split-rows", "matmul.split-cols"}, {batch, hidden});
  f.choose(1, {"add.split", "add.split"}, {batch, hidden});
  f.choose(2, {"relu.split", "relu.split"}, {batch, hidden});
  f.choose(3, {"matmul.split-rows", "matmul.split-contraction"},
           {batch, hidden});
  f.choose(4, {"cross_entropy.split-batch", "cross_entropy.replicate"},
           {batch, -1});
  auto plan = f.build();
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  std::string text = printed(**plan);
  // w2 (zero3, split on axis 0) is gathered; b1 sharded; the contraction's
  // partial sum all-reduced on axis 1 before the loss; the loss on axis 0.
  EXPECT_EQ(count(text, "spmd.all_gather"), 1u) << text;
  EXPECT_EQ(count(text, "spmd.shard"), 2u) << text; // b1 and w2
  EXPECT_EQ(count(text, "spmd.all_reduce"), 2u) << text;
  EXPECT_NE(text.find("strategy = #spmd.strategy<zero3>"), std::string::npos);
}

TEST(ProgramBuilderTest, InvalidChoicesAreErrors) {
  Fixture f;
  int64_t batch = f.table->get(8, {0.25, 0.25}, 0b11);
  int64_t six = f.table->get(6, {0.25, 0.25}, 0b11);
  auto expectError = [&](llvm::StringRef fragment) {
    auto plan = f.build();
    ASSERT_FALSE(bool(plan));
    std::string msg = llvm::toString(plan.takeError());
    EXPECT_NE(msg.find(fragment.str()), std::string::npos) << msg;
  };
  for (size_t k = 0; k < 5; ++k) {
    mlir::Operation *op = planOps(f.main)[k];
    std::string rep = (op->getName().stripDialect() + ".replicate").str();
    f.choose(k, {rep, rep}, {-1, -1});
  }
  {
    auto plan = f.build();
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  }
  f.choose(0, {"matmul.replicate"}, {-1});
  expectError("1 variant(s) for a 2-axis mesh");
  f.choose(0, {"matmul.partial-lhs", "matmul.replicate"}, {-1, -1});
  expectError("cannot turn id into sum on axis 0");
  f.choose(0, {"matmul.split-rows", "matmul.replicate"}, {six, -1});
  expectError("segment 1 has extent 6");
  f.choose(0, {"matmul.split-rows", "matmul.replicate"}, {-1, -1});
  expectError("needs a segment");
  f.choose(0, {"matmul.split-rows", "matmul.replicate"}, {batch, -1});
  f.choice.ops.pop_back();
  expectError("the plan chooses 4 op(s), the program has 5");
}

} // namespace
