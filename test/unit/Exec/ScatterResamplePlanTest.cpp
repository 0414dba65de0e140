//===- ScatterResamplePlanTest.cpp - Random plans of the new ops ----------===//
//
// A decoder-like graph program (a transposed convolution, a grouped one, a
// bilinear upsampling and a nearest downsampling, scatters of every
// sharding rule; weights, data and updates made by matmuls, so that
// partial sums reach every operand; one mul reads a value twice, whose two
// operands may take different layouts) under random valid plans on random
// meshes: every plan computes the model (weft-run --plan's check: loss and
// every parameter gradient), and over the seeds every variant of the four ops
// is taken at least once, so each rule, its local recipe (the groups of a
// device's shard, the offsets of an indexed split) and the duals of the
// collectives around it are exercised.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "weft/Exec/PlanCheck.h"
#include "weft/Spmd/RandomPlan.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <map>

using namespace weft;
using namespace weft::exec;
using namespace weft::spmd;

namespace {

/// `dense<...>` of 4×6×5 indices in [0, bound), a fixed pattern with
/// repeats.
std::string indices(int64_t bound, int64_t step) {
  std::string s = "dense<[";
  for (int64_t a = 0, i = 0; a < 4; ++a) {
    s += a ? ", [" : "[";
    for (int64_t b = 0; b < 6; ++b) {
      s += b ? ", [" : "[";
      for (int64_t c = 0; c < 5; ++c, ++i)
        s += (c ? ", " : "") + std::to_string((i * step + i / 3) % bound);
      s += "]";
    }
    s += "]";
  }
  return s + "]>";
}

std::string program() {
  return llvm::formatv(R"mlir(
func.func @main(%img: tensor<4x3x5x5xf32> {{graph.input = "img"}) -> tensor<f32> {
  %w1 = graph.parameter "ct.weight" : tensor<3x4x3x3xf32>
  %b1 = graph.parameter "ct.bias" : tensor<4xf32>
  %ct = graph.conv_transpose2d %img, %w1, %b1 {{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<4x3x5x5xf32>, tensor<3x4x3x3xf32>, tensor<4xf32>) -> tensor<4x4x10x10xf32>
  %w2a = graph.parameter "gct.a" : tensor<48x3xf32>
  %w2b = graph.parameter "gct.b" : tensor<3x1xf32>
  %w2m = graph.matmul %w2a, %w2b : (tensor<48x3xf32>, tensor<3x1xf32>) -> tensor<48x1xf32>
  %w2 = graph.reshape %w2m : tensor<48x1xf32> -> tensor<4x3x2x2xf32>
  %gct = graph.conv_transpose2d %ct, %w2 {{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 2 : i64} : (tensor<4x4x10x10xf32>, tensor<4x3x2x2xf32>) -> tensor<4x6x11x11xf32>
  %up = graph.resize %gct {{mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 1.5, 1.5>} : (tensor<4x6x11x11xf32>) -> tensor<4x6x16x16xf32>
  %dn = graph.resize %up {{mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 0.5, 0.5>} : (tensor<4x6x16x16xf32>) -> tensor<4x6x8x8xf32>
  %f = graph.reshape %dn : tensor<4x6x8x8xf32> -> tensor<4x6x64xf32>
  %idx = graph.constant {0} : tensor<4x6x5xi64> : tensor<4x6x5xi64>
  %ua = graph.parameter "upd.a" : tensor<120x3xf32>
  %ub = graph.parameter "upd.b" : tensor<3x1xf32>
  %um = graph.matmul %ua, %ub : (tensor<120x3xf32>, tensor<3x1xf32>) -> tensor<120x1xf32>
  %upd = graph.reshape %um : tensor<120x1xf32> -> tensor<4x6x5xf32>
  %add = graph.scatter_elements %f, %idx, %upd {{axis = 2 : i64, reduction = "add"} : (tensor<4x6x64xf32>, tensor<4x6x5xi64>, tensor<4x6x5xf32>) -> tensor<4x6x64xf32>
  %sc = graph.parameter "scale" : tensor<4x6x5xf32>
  %mul = graph.scatter_elements %add, %idx, %sc {{axis = 2 : i64, reduction = "mul"} : (tensor<4x6x64xf32>, tensor<4x6x5xi64>, tensor<4x6x5xf32>) -> tensor<4x6x64xf32>
  %ndi = graph.constant dense<[[0, 1], [3, 5], [2, 0], [3, 5]]> : tensor<4x2xi64> : tensor<4x2xi64>
  %na = graph.parameter "nd.a" : tensor<4x3xf32>
  %nb = graph.parameter "nd.b" : tensor<3x64xf32>
  %ndu = graph.matmul %na, %nb : (tensor<4x3xf32>, tensor<3x64xf32>) -> tensor<4x64xf32>
  %nd = graph.scatter_nd %mul, %ndi, %ndu : (tensor<4x6x64xf32>, tensor<4x2xi64>, tensor<4x64xf32>) -> tensor<4x6x64xf32>
  %sq = graph.mul %nd, %nd : (tensor<4x6x64xf32>, tensor<4x6x64xf32>) -> tensor<4x6x64xf32>
  %la = graph.reduce_mean %sq {{axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<4x6x64xf32> -> tensor<f32>
  %pa = graph.parameter "b.a" : tensor<4x3xf32>
  %pb = graph.parameter "b.b" : tensor<3x64xf32>
  %db = graph.matmul %pa, %pb : (tensor<4x3xf32>, tensor<3x64xf32>) -> tensor<4x64xf32>
  %pc = graph.parameter "b.c" : tensor<3x5xf32>
  %uc = graph.matmul %pa, %pc : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %ib = graph.constant dense<[[1, 7, 1, 63, 20], [0, 0, 5, 9, 31], [2, 4, 6, 8, 10], [62, 61, 1, 1, 1]]> : tensor<4x5xi64> : tensor<4x5xi64>
  %eb = graph.scatter_elements %db, %ib, %uc {{axis = 1 : i64} : (tensor<4x64xf32>, tensor<4x5xi64>, tensor<4x5xf32>) -> tensor<4x64xf32>
  %pd = graph.parameter "b.d" : tensor<2x3xf32>
  %nu = graph.matmul %pd, %pb : (tensor<2x3xf32>, tensor<3x64xf32>) -> tensor<2x64xf32>
  %ni = graph.constant dense<[[3], [1]]> : tensor<2x1xi64> : tensor<2x1xi64>
  %ndb = graph.scatter_nd %eb, %ni, %nu : (tensor<4x64xf32>, tensor<2x1xi64>, tensor<2x64xf32>) -> tensor<4x64xf32>
  %k2 = graph.parameter "k2" : tensor<4x64xf32>
  %sb = graph.mul %ndb, %k2 : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %lb = graph.reduce_mean %sb {{axes = array<i64: 0, 1>, keepdims = false} : tensor<4x64xf32> -> tensor<f32>
  %l = graph.add %la, %lb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir",
                       indices(64, 13))
      .str();
}

class ScatterResamplePlanTest : public ::testing::Test {
protected:
  ScatterResamplePlanTest() {
    context.loadDialect<graph::GraphDialect, SpmdDialect,
                        mlir::func::FuncDialect>();
  }
  mlir::MLIRContext context;
};

TEST_F(ScatterResamplePlanTest, RandomPlansComputeTheModel) {
  std::string text = program();
  auto g = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(g) << text;
  // Every non-replicate variant the four ops have in this program.
  std::map<std::string, int> taken;
  g->walk([&](graph::ShardingRuleOpInterface op) {
    if (!llvm::isa<graph::ConvTranspose2dOp, graph::ResizeOp,
                   graph::ScatterElementsOp, graph::ScatterNdOp>(op))
      return;
    llvm::SmallVector<graph::ShardingVariant, 8> variants;
    op.getShardingVariants(variants);
    for (const graph::ShardingVariant &v : variants)
      if (!llvm::StringRef(v.name).endswith(".replicate"))
        taken[v.name] = 0;
  });
  ASSERT_EQ(taken.size(), 17u);
  RandomPlanOptions options;
  options.replicateProbability = 0.05;
  llvm::Regex name("(conv_transpose2d|resize|scatter_elements|scatter_nd)\\."
                   "[a-z-]+");
  int cases = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    MeshAttr mesh = randomMesh(&context, seed * 11 + 5);
    auto plan = randomPlan(*g, mesh, seed, options);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    std::string printed;
    llvm::raw_string_ostream os(printed);
    plan->plan->print(os);
    llvm::StringRef rest = os.str();
    llvm::SmallVector<llvm::StringRef, 2> m;
    while (name.match(rest, &m)) {
      if (taken.count(m[0].str()))
        ++taken[m[0].str()];
      rest = rest.drop_front(rest.find(m[0]) + m[0].size());
    }
    if (const char *dir = std::getenv("WEFT_SCATTER_RESAMPLE_DUMP")) {
      // Reproduce with weft-run DIR/graph.mlir --plan DIR/plan-S.mlir
      // --seed S.
      std::error_code ec;
      llvm::raw_fd_ostream gos(std::string(dir) + "/graph.mlir", ec);
      g->print(gos);
      llvm::raw_fd_ostream pos(
          std::string(dir) + "/plan-" + std::to_string(seed) + ".mlir", ec);
      plan->plan->print(pos);
    }
    PlanCheckOptions check;
    check.seed = seed;
    auto r = checkPlan(*g, *plan->plan, check);
    ASSERT_TRUE(bool(r)) << "seed " << seed << ": "
                         << llvm::toString(r.takeError());
    ++cases;
    EXPECT_TRUE(r->agree) << "seed " << seed << ": "
                          << (r->mismatch
                                  ? r->mismatch->op + ", " + r->mismatch->tensor
                                  : std::string());
  }
  EXPECT_EQ(cases, 300);
  std::string counts;
  for (const auto &[variant, count] : taken)
    counts += llvm::formatv(" {0} {1},", variant, count).str();
  llvm::errs() << "variants taken in " << cases << " plans:" << counts << "\n";
  for (const auto &[variant, count] : taken)
    EXPECT_GT(count, 0) << variant << " was never taken";
}

} // namespace
