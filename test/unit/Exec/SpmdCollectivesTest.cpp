//===- SpmdCollectivesTest.cpp - Collectives on virtual devices -----------===//
//
// Every collective against the whole tensor: shards of a global value
// relaid out must be the shards of the same value under the new
// distribution (uneven and zero sizes, splits on the node axis, the local
// axis and both).
//
//===----------------------------------------------------------------------===//

#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "weft/Exec/SpmdKernels.h"
#include "gtest/gtest.h"

using namespace weft::exec;
using namespace weft::spmd;

namespace {

class SpmdCollectivesTest : public ::testing::Test {
protected:
  SpmdCollectivesTest() {
    context.loadDialect<SpmdDialect, mlir::func::FuncDialect>();
    // 2 nodes x 2 devices; segment 0 (extent 7) uneven with a zero,
    // segment 1 (extent 5) uneven.
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = "
        "[#spmd.device_class<type = \"V100\", peak_gflops = 1, memory_mb = 1, "
        "nodes = [0]>, #spmd.device_class<type = \"P100\", peak_gflops = 1, "
        "memory_mb = 1, nodes = [1]>]>, spmd.segments = [#spmd.segment<id = "
        "0, extent = 7, ratios = [0.25, 0.25], sizes = [3, 0, 2, 2]>, "
        "#spmd.segment<id = 1, extent = 5, ratios = [0.25, 0.25], sizes = "
        "[1, 2, 1, 1]>]} {}",
        &context);
    auto g = ShardGeometry::get(*module);
    EXPECT_TRUE(bool(g));
    geo = std::move(*g);
    std::vector<float> values(7 * 5);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = float(i) + 1;
    whole = Tensor::fromFloats({7, 5}, values);
  }

  DistAttr dist(AxisDist a0, AxisDist a1) {
    return DistAttr::get(&context, {a0, a1});
  }

  std::vector<Tensor> shards(DistAttr d) {
    std::vector<Tensor> out;
    for (unsigned x = 0; x < geo.numDevices(); ++x)
      out.push_back(extractBox(whole, geo.shardBox(whole.getShape(), d, x)));
    return out;
  }

  /// Every device's shard equals the whole tensor's piece under `d`.
  void expectShardsOf(const std::vector<Tensor> &got, DistAttr d,
                      float scale = 1) {
    for (unsigned x = 0; x < geo.numDevices(); ++x) {
      Tensor want = extractBox(whole, geo.shardBox(whole.getShape(), d, x));
      ASSERT_EQ(got[x].getShape(), want.getShape()) << "device " << x;
      for (int64_t i = 0; i < want.getNumElements(); ++i)
        EXPECT_FLOAT_EQ(got[x].floats()[i], scale * want.floats()[i])
            << "device " << x << " element " << i;
    }
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ShardGeometry geo;
  Tensor whole;
};

TEST_F(SpmdCollectivesTest, ShardAndAllGather) {
  DistAttr whole2 = dist(AxisDist::identity(), AxisDist::identity());
  DistAttr local = dist(AxisDist::identity(), AxisDist::gather(0, 0));
  DistAttr both = dist(AxisDist::gather(0, 0), AxisDist::gather(0, 0));
  // shard (local axis), then shard on the node axis: per-device pieces.
  auto s1 = exchange(geo, whole.getShape(), ElementType::F32, shards(whole2),
                     whole2, local, 1u << 1, Exchange::Own);
  expectShardsOf(s1, local);
  auto s2 = exchange(geo, whole.getShape(), ElementType::F32, s1, local, both,
                     1u << 0, Exchange::Own);
  expectShardsOf(s2, both);
  // all_gather on the node axis: from per-device pieces back to local-axis
  // groups, whose pieces are not contiguous in device order.
  auto g0 = exchange(geo, whole.getShape(), ElementType::F32, s2, both, local,
                     1u << 0, Exchange::Copy);
  expectShardsOf(g0, local);
  auto g1 = exchange(geo, whole.getShape(), ElementType::F32, g0, local, whole2,
                     1u << 1, Exchange::Copy);
  expectShardsOf(g1, whole2);
}

TEST_F(SpmdCollectivesTest, AllToAllUneven) {
  DistAttr rows = dist(AxisDist::gather(0, 0), AxisDist::gather(0, 0));
  DistAttr cols = dist(AxisDist::gather(0, 0), AxisDist::gather(1, 1));
  DistAttr cols2 = dist(AxisDist::gather(1, 1), AxisDist::gather(0, 0));
  // Local axis: columns (1 + 1 | 2 + 1) back to rows (3 | 0, 2 | 2).
  auto a = exchange(geo, whole.getShape(), ElementType::F32, shards(cols), cols,
                    rows, 1u << 1, Exchange::Copy);
  expectShardsOf(a, rows);
  auto b = exchange(geo, whole.getShape(), ElementType::F32, shards(rows), rows,
                    cols, 1u << 1, Exchange::Copy);
  expectShardsOf(b, cols);
  // Node axis.
  auto c = exchange(geo, whole.getShape(), ElementType::F32, shards(rows), rows,
                    cols2, 1u << 0, Exchange::Copy);
  expectShardsOf(c, dist(AxisDist::gather(1, 1), AxisDist::gather(0, 0)));
}

TEST_F(SpmdCollectivesTest, ReduceScatterAndAllReduce) {
  // Partial sums: device x holds (x + 1) / 10 of the value on the local
  // axis group, split by rows on the node axis.
  DistAttr partial = dist(AxisDist::gather(0, 0), AxisDist::sum());
  DistAttr rowsNode = dist(AxisDist::gather(0, 0), AxisDist::identity());
  std::vector<Tensor> parts = shards(partial);
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    float share = geo.coord(x, 1) == 0 ? 0.25f : 0.75f;
    for (int64_t i = 0; i < parts[x].getNumElements(); ++i)
      parts[x].floats()[i] *= share;
  }
  auto r = exchange(geo, whole.getShape(), ElementType::F32, parts, partial,
                    rowsNode, 1u << 1, Exchange::Add);
  expectShardsOf(r, rowsNode);
  DistAttr scattered = dist(AxisDist::gather(0, 0), AxisDist::gather(1, 1));
  auto rs = exchange(geo, whole.getShape(), ElementType::F32, parts, partial,
                     scattered, 1u << 1, Exchange::Add);
  expectShardsOf(rs, scattered);
  // Max: every device holds the value or less.
  DistAttr maxed = dist(AxisDist::gather(0, 0), AxisDist::max());
  std::vector<Tensor> m = shards(maxed);
  for (unsigned x = 0; x < geo.numDevices(); ++x)
    if (geo.coord(x, 1) == 1)
      for (int64_t i = 0; i < m[x].getNumElements(); ++i)
        m[x].floats()[i] -= 3;
  auto mr = exchange(geo, whole.getShape(), ElementType::F32, m, maxed,
                     rowsNode, 1u << 1, Exchange::Max);
  expectShardsOf(mr, rowsNode);
  // combinedShard gives the reference piece of a partial value.
  DistValue v{partial, parts};
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    Tensor c = combinedShard(geo, v, x);
    Tensor want = extractBox(whole, geo.shardBox(whole.getShape(), partial, x));
    for (int64_t i = 0; i < want.getNumElements(); ++i)
      EXPECT_FLOAT_EQ(c.floats()[i], want.floats()[i]);
  }
}

TEST_F(SpmdCollectivesTest, StatsAllReduce) {
  std::vector<std::vector<double>> s = {{1, 5}, {2, 6}, {3, 7}, {4, 8}};
  allReduceStats(geo, s, 1u << 0, /*max=*/false);
  EXPECT_EQ(s[0], (std::vector<double>{4, 12}));
  EXPECT_EQ(s[1], (std::vector<double>{6, 14}));
  allReduceStats(geo, s, 1u << 1, /*max=*/true);
  EXPECT_EQ(s[2], (std::vector<double>{6, 14}));
}

} // namespace
