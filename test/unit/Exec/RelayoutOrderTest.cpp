//===- RelayoutOrderTest.cpp - A dim split on two axes, in both orders ----===//
//
// Issue 24 item 3. ShardGeometry orders the pieces of a dim split on two
// mesh axes axis 0 major, so they nest only when the dim is split major axis
// first and gathered minor axis first. Property cases over random meshes
// (2–3 × 2–3 devices) and uneven segments (zeros included): in the nested
// order every shard and all_gather gives each device its box of the whole
// tensor; in the other order the relayout is either still exact (the sizes
// happen to nest) or refused by `unreachableDevice` — never zeros. Every
// relayout `planRelayout` emits between two distributions nests; and a plan
// that shards in the wrong order is caught by checkPlan at that shard.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "weft/Exec/PlanCheck.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Spmd/Relayout.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::exec;
using namespace weft::spmd;

namespace {

/// One random case: an N×L mesh, a segment of `extent` with random sizes,
/// and a 2-D value whose dim `dim` has that extent.
struct Case {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ShardGeometry geo;
  Tensor whole;
  int64_t dim = 0;
  std::string describe;
};

std::string meshText(int64_t nodes, int64_t local) {
  std::string nodeList;
  for (int64_t n = 0; n < nodes; ++n)
    nodeList += (n ? ", " : "") + std::to_string(n);
  return llvm::formatv("#spmd.mesh<local = [{0}], classes = "
                       "[#spmd.device_class<type = \"V100\", peak_gflops = 1, "
                       "memory_mb = 1, nodes = [{1}]>]>",
                       local, nodeList)
      .str();
}

std::string segmentText(int64_t id, llvm::ArrayRef<int64_t> sizes) {
  int64_t extent = 0;
  std::string list;
  for (int64_t s : sizes) {
    extent += s;
    list += (list.empty() ? "" : ", ") + std::to_string(s);
  }
  return llvm::formatv(
             "#spmd.segment<id = {0}, extent = {1}, ratios = [{2:e16}], "
             "sizes = [{3}]>",
             id, extent, 1.0 / double(sizes.size()), list)
      .str();
}

/// Random sizes summing to `extent` over `n` devices, some zero.
std::vector<int64_t> randomSizes(std::mt19937_64 &rng, unsigned n,
                                 int64_t extent) {
  std::vector<int64_t> sizes(n, 0);
  for (int64_t i = 0; i < extent; ++i)
    ++sizes[rng() % n];
  return sizes;
}

Case makeCase(mlir::MLIRContext &ctx, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Case c;
  int64_t nodes = 2 + rng() % 2, local = 2 + rng() % 2;
  unsigned n = nodes * local;
  int64_t extent = 1 + rng() % 13;
  std::vector<int64_t> sizes = randomSizes(rng, n, extent);
  std::vector<int64_t> other = randomSizes(rng, n, 5);
  c.dim = rng() % 2;
  std::string text =
      "module attributes {spmd.mesh = " + meshText(nodes, local) +
      ", spmd.segments = [" + segmentText(0, sizes) + ", " +
      segmentText(1, other) + "]} {}";
  c.module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  auto g = ShardGeometry::get(*c.module);
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError()) << "\n" << text;
    return c;
  }
  c.geo = std::move(*g);
  Shape shape = c.dim == 0 ? Shape{extent, 5} : Shape{5, extent};
  std::vector<float> values(extent * 5);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(i) + 1;
  c.whole = Tensor::fromFloats(shape, values);
  c.describe =
      llvm::formatv("seed {0}: mesh {1}x{2}, dim {3}, sizes [{4}]", seed, nodes,
                    local, c.dim, llvm::make_range(sizes.begin(), sizes.end()))
          .str();
  return c;
}

std::vector<Tensor> shardsOf(const Case &c, DistAttr d) {
  std::vector<Tensor> out;
  for (unsigned x = 0; x < c.geo.numDevices(); ++x)
    out.push_back(
        extractBox(c.whole, c.geo.shardBox(c.whole.getShape(), d, x)));
  return out;
}

bool exact(const Case &c, const std::vector<Tensor> &got, DistAttr d) {
  std::vector<Tensor> want = shardsOf(c, d);
  for (unsigned x = 0; x < want.size(); ++x) {
    if (got[x].getShape() != want[x].getShape())
      return false;
    for (int64_t i = 0; i < want[x].getNumElements(); ++i)
      if (got[x].floats()[i] != want[x].floats()[i])
        return false;
  }
  return true;
}

struct Tally {
  int exactSteps = 0, refused = 0, nestedByChance = 0;
};

/// One relayout step: refused ⇔ not exact (the check is neither blind nor
/// too strict). Returns the result (the exact shards when refused, so the
/// next step starts from the right values).
std::vector<Tensor> step(const Case &c, const std::vector<Tensor> &in,
                         DistAttr from, DistAttr to, unsigned axis,
                         Exchange how, bool mustNest, Tally &tally,
                         llvm::StringRef what) {
  std::vector<Tensor> out =
      exchange(c.geo, c.whole.getShape(), ElementType::F32, in, from, to,
               1u << axis, how);
  bool ok = exact(c, out, to);
  bool refused =
      unreachableDevice(c.geo, c.whole.getShape(), from, to, 1u << axis, how)
          .has_value();
  EXPECT_NE(ok, refused) << c.describe << ": " << what.str()
                         << (ok ? " exact but refused" : " wrong but accepted");
  if (mustNest)
    EXPECT_TRUE(ok) << c.describe << ": " << what.str();
  tally.exactSteps += ok;
  tally.refused += refused;
  if (!mustNest && ok)
    ++tally.nestedByChance;
  return ok ? out : shardsOf(c, to);
}

TEST(RelayoutOrderTest, ShardAndGatherOneDimOnTwoAxesInBothOrders) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<SpmdDialect, mlir::func::FuncDialect>();
  Tally nested, other;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Case c = makeCase(ctx, seed);
    ASSERT_TRUE(c.module);
    AxisDist id = AxisDist::identity(), g = AxisDist::gather(c.dim, 0);
    DistAttr whole = DistAttr::get(&ctx, {id, id});
    DistAttr major = DistAttr::get(&ctx, {g, id});
    DistAttr minor = DistAttr::get(&ctx, {id, g});
    DistAttr both = DistAttr::get(&ctx, {g, g});
    // Nested: shard axis 0 then 1, gather axis 1 then 0.
    auto v = shardsOf(c, whole);
    v = step(c, v, whole, major, 0, Exchange::Own, true, nested, "shard 0");
    v = step(c, v, major, both, 1, Exchange::Own, true, nested, "shard 1");
    v = step(c, v, both, major, 1, Exchange::Copy, true, nested, "gather 1");
    v = step(c, v, major, whole, 0, Exchange::Copy, true, nested, "gather 0");
    // The other order: shard axis 1 then 0, gather axis 0 then 1.
    v = shardsOf(c, whole);
    v = step(c, v, whole, minor, 1, Exchange::Own, true, nested, "shard 1st");
    v = step(c, v, minor, both, 0, Exchange::Own, false, other, "shard 0 2nd");
    v = step(c, v, both, minor, 0, Exchange::Copy, false, other,
             "gather 0 1st");
    v = step(c, v, minor, whole, 1, Exchange::Copy, true, nested,
             "gather 1 2nd");
    // Reduce-scatter along the inner axis of a partial value.
    DistAttr partial = DistAttr::get(&ctx, {g, AxisDist::sum()});
    auto p = shardsOf(c, partial);
    for (unsigned x = 0; x < c.geo.numDevices(); ++x)
      if (c.geo.coord(x, 1) != 0)
        for (int64_t i = 0; i < p[x].getNumElements(); ++i)
          p[x].floats()[i] = 0;
    step(c, p, partial, both, 1, Exchange::Add, true, nested,
         "reduce_scatter 1");
  }
  EXPECT_EQ(nested.refused, 0);
  // Both outcomes of the other order occur: the property is exercised.
  EXPECT_GT(other.refused, 50);
  EXPECT_GT(other.nestedByChance, 10);
}

/// Every relayout planRelayout emits between two distributions of a 2-D
/// value on a 2-axis mesh runs exactly (each step nests).
TEST(RelayoutOrderTest, PlannedRelayoutsNest) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<SpmdDialect, mlir::func::FuncDialect>();
  int planned = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Case c = makeCase(ctx, seed);
    ASSERT_TRUE(c.module);
    // Dim c.dim has segment 0, the other dim (extent 5) segment 1.
    int64_t dims[2] = {c.dim, 1 - c.dim};
    llvm::SmallVector<AxisDist, 4> entries{AxisDist::identity()};
    for (int64_t s = 0; s < 2; ++s)
      entries.push_back(AxisDist::gather(dims[s], s));
    llvm::SmallVector<DistAttr, 16> dists;
    for (AxisDist a : entries)
      for (AxisDist b : entries)
        dists.push_back(DistAttr::get(&ctx, {a, b}));
    for (DistAttr from : dists)
      for (DistAttr to : dists) {
        auto steps = planRelayout(from, to);
        ASSERT_TRUE(mlir::succeeded(steps));
        auto v = shardsOf(c, from);
        for (const RelayoutStep &s : *steps) {
          Exchange how = s.kind == RelayoutKind::Shard ? Exchange::Own
                         : s.kind == RelayoutKind::AllGather ||
                                 s.kind == RelayoutKind::AllToAll
                             ? Exchange::Copy
                             : Exchange::Add;
          EXPECT_FALSE(unreachableDevice(c.geo, c.whole.getShape(), s.before,
                                         s.after, 1u << s.axis, how))
              << c.describe << ": " << toString(s.kind).str() << " on axis "
              << s.axis;
          v = exchange(c.geo, c.whole.getShape(), ElementType::F32, v, s.before,
                       s.after, 1u << s.axis, how);
        }
        EXPECT_TRUE(exact(c, v, to)) << c.describe;
        ++planned;
      }
  }
  EXPECT_EQ(planned, 60 * 81);
}

/// A plan that shards a weight's rows on the local axis and then on the
/// node axis asks devices for rows they do not hold: checkPlan names that
/// shard; the nested order computes the model.
TEST(RelayoutOrderTest, PlanShardingInTheWrongOrderIsCaught) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect, SpmdDialect, mlir::func::FuncDialect>();
  const char *model = R"(
func.func @main(%x: tensor<4x6xf32> {graph.input = "x"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<6x5xf32>
  %h = graph.matmul %x, %w : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32> loc("fc")
  %m = graph.reduce_mean %h {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x5xf32> -> tensor<f32> loc("mean")
  return %m : tensor<f32>
})";
  auto planText = [](bool nested) {
    std::string first = nested ? "0" : "1", second = nested ? "1" : "0";
    std::string mid = nested ? "[gather(0, 0), id]" : "[id, gather(0, 0)]";
    return "module attributes {spmd.mesh = " + meshText(2, 2) +
           ", spmd.segments = [" + segmentText(0, {2, 1, 1, 2}) +
           R"(], spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x6xf32> {spmd.dist = #spmd.dist<[gather(1, 0), gather(1, 0)]>}) -> tensor<f32> {
    %w0 = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<6x5xf32> -> #spmd.dist<[id, id]>
    %w1 = spmd.shard %w0 {axis = )" +
           first + R"( : i64} : tensor<6x5xf32> -> #spmd.dist<)" + mid + R"(>
    %w = spmd.shard %w1 {axis = )" +
           second +
           R"( : i64} : tensor<6x5xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    %h = spmd.local(%x, %w) {variant = "matmul.split-contraction, matmul.split-contraction", dists = [#spmd.dist<[sum, sum]>]} : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32> {
    ^bb0(%a: tensor<4x6xf32>, %c: tensor<6x5xf32>):
      %v = graph.matmul %a, %c : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32> loc("fc")
      spmd.yield %v : tensor<4x5xf32>
    }
    %h1 = spmd.all_reduce %h {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<4x5xf32> -> #spmd.dist<[sum, id]>
    %h2 = spmd.all_reduce %h1 {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<4x5xf32> -> #spmd.dist<[id, id]>
    %m = spmd.local(%h2) {variant = "reduce_mean.replicate, reduce_mean.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<4x5xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x5xf32>):
      %v = graph.reduce_mean %a {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x5xf32> -> tensor<f32> loc("mean")
      spmd.yield %v : tensor<f32>
    }
    return %m : tensor<f32>
  }
})";
  };
  auto graph = mlir::parseSourceString<mlir::ModuleOp>(model, &ctx);
  ASSERT_TRUE(graph);
  for (bool nested : {true, false}) {
    auto plan = mlir::parseSourceString<mlir::ModuleOp>(planText(nested), &ctx);
    ASSERT_TRUE(plan) << planText(nested);
    auto r = checkPlan(*graph, *plan, PlanCheckOptions());
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_EQ(r->agree, nested)
        << (r->mismatch ? r->mismatch->op : std::string());
    if (!nested) {
      ASSERT_TRUE(r->mismatch.has_value());
      EXPECT_NE(r->mismatch->op.find("spmd.shard"), std::string::npos)
          << r->mismatch->op;
      EXPECT_NE(r->mismatch->op.find("major axis first"), std::string::npos)
          << r->mismatch->op;
    }
  }
}

} // namespace
