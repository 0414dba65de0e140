//===- ShardGeometryTest.cpp - Shard extents and offsets of a mesh --------===//

#include "weft/Spmd/ShardGeometry.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace weft::spmd;

namespace {

class ShardGeometryTest : public ::testing::Test {
protected:
  ShardGeometryTest() {
    context.loadDialect<SpmdDialect, mlir::func::FuncDialect>();
  }

  /// A module with 2 nodes x local [2] (4 devices) and the given segments.
  ShardGeometry make(llvm::StringRef segments, llvm::StringRef local = "2",
                     llvm::StringRef nodes = "[0], nodes = [1]") {
    std::string text =
        ("module attributes {spmd.mesh = #spmd.mesh<local = [" + local +
         "], classes = [#spmd.device_class<type = \"V100\", peak_gflops = 1, "
         "memory_mb = 1, nodes = " +
         nodes.split(',').first +
         ">, #spmd.device_class<type = \"P100\", peak_gflops = 1, memory_mb "
         "= 1, " +
         nodes.split(", ").second + ">]>, spmd.segments = [" + segments +
         "]} {}")
            .str();
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    auto g = ShardGeometry::get(*module);
    EXPECT_TRUE(bool(g));
    if (!g) {
      llvm::consumeError(g.takeError());
      return ShardGeometry();
    }
    return *g;
  }

  DistAttr dist(llvm::ArrayRef<AxisDist> axes) {
    return DistAttr::get(&context, axes);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// Segment 0: extent 10, sizes [4, 3, 3, 0] (node 1 local 1 holds nothing).
const char *kUneven = "#spmd.segment<id = 0, extent = 10, ratios = [0.35, "
                      "0.15], sizes = [4, 3, 3, 0]>";

TEST_F(ShardGeometryTest, DevicesAreNodeMajor) {
  ShardGeometry g = make(kUneven);
  ASSERT_EQ(g.numDevices(), 4u);
  ASSERT_EQ(g.numAxes(), 2u);
  EXPECT_EQ(g.coord(2, 0), 1);
  EXPECT_EQ(g.coord(2, 1), 0);
  EXPECT_EQ(g.deviceAt({1, 1}), 3u);
  EXPECT_EQ(g.groupAlong(1, 1u << 0), (llvm::SmallVector<unsigned, 8>{1, 3}));
  EXPECT_EQ(g.groupAlong(1, 1u << 1), (llvm::SmallVector<unsigned, 8>{0, 1}));
  EXPECT_EQ(g.groupAlong(1, 3u).size(), 4u);
  EXPECT_EQ(g.rankInGroup(3, 1u << 0), 1u);
}

TEST_F(ShardGeometryTest, SplitOnBothAxesIsPerDevice) {
  ShardGeometry g = make(kUneven);
  DistAttr d = dist({AxisDist::gather(0, 0), AxisDist::gather(0, 0)});
  int64_t shape[] = {10, 5};
  std::vector<int64_t> ext, off;
  for (unsigned x = 0; x < 4; ++x) {
    ext.push_back(g.shardExtent(shape, d, 0, x));
    off.push_back(g.shardOffset(shape, d, 0, x));
    EXPECT_EQ(g.shardExtent(shape, d, 1, x), 5);
    EXPECT_EQ(g.shardOffset(shape, d, 1, x), 0);
  }
  EXPECT_EQ(ext, (std::vector<int64_t>{4, 3, 3, 0}));
  EXPECT_EQ(off, (std::vector<int64_t>{0, 4, 7, 10}));
}

TEST_F(ShardGeometryTest, SplitOnNodeAxisOnlySumsTheNode) {
  ShardGeometry g = make(kUneven);
  DistAttr d = dist({AxisDist::gather(0, 0), AxisDist::identity()});
  int64_t shape[] = {10};
  std::vector<int64_t> ext, off;
  for (unsigned x = 0; x < 4; ++x) {
    ext.push_back(g.shardExtent(shape, d, 0, x));
    off.push_back(g.shardOffset(shape, d, 0, x));
  }
  EXPECT_EQ(ext, (std::vector<int64_t>{7, 7, 3, 3}));
  EXPECT_EQ(off, (std::vector<int64_t>{0, 0, 7, 7}));
}

TEST_F(ShardGeometryTest, SplitOnLocalAxisOnlySumsOverNodes) {
  ShardGeometry g = make(kUneven);
  DistAttr d = dist({AxisDist::identity(), AxisDist::gather(0, 0)});
  int64_t shape[] = {10};
  std::vector<int64_t> ext, off;
  for (unsigned x = 0; x < 4; ++x) {
    ext.push_back(g.shardExtent(shape, d, 0, x));
    off.push_back(g.shardOffset(shape, d, 0, x));
  }
  // Local position 0: 4 + 3; local position 1: 3 + 0.
  EXPECT_EQ(ext, (std::vector<int64_t>{7, 3, 7, 3}));
  EXPECT_EQ(off, (std::vector<int64_t>{0, 7, 0, 7}));
}

TEST_F(ShardGeometryTest, ZeroSizesAndBoxes) {
  ShardGeometry g = make("#spmd.segment<id = 0, extent = 3, ratios = [0.5, "
                         "0.0], sizes = [2, 1, 0, 0]>, #spmd.segment<id = 1, "
                         "extent = 4, ratios = [0.25, 0.25], sizes = [1, 1, "
                         "1, 1]>");
  DistAttr d = dist({AxisDist::gather(1, 1), AxisDist::gather(0, 0)});
  int64_t shape[] = {3, 4};
  ShardBox b = g.shardBox(shape, d, 3);
  // Dim 0 on the local axis: position 1 holds 1 + 0 at offset 2.
  EXPECT_EQ(b.extents, (llvm::SmallVector<int64_t, 4>{1, 2}));
  EXPECT_EQ(b.offsets, (llvm::SmallVector<int64_t, 4>{2, 2}));
  ShardBox b0 = g.shardBox(shape, d, 0);
  EXPECT_EQ(b0.extents, (llvm::SmallVector<int64_t, 4>{2, 2}));
  EXPECT_EQ(b0.offsets, (llvm::SmallVector<int64_t, 4>{0, 0}));
  EXPECT_EQ(g.segmentSizes(0), (llvm::ArrayRef<int64_t>{2, 1, 0, 0}));
}

TEST_F(ShardGeometryTest, RejectsSizesThatDoNotSum) {
  std::string text =
      "module attributes {spmd.mesh = #spmd.mesh<local = [1], classes = "
      "[#spmd.device_class<type = \"V100\", peak_gflops = 1, memory_mb = 1, "
      "nodes = [0, 1]>]>} {}";
  module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  auto mesh = (*module)->getAttrOfType<MeshAttr>("spmd.mesh");
  auto seg = SegmentAttr::get(
      &context, 0, 5, mlir::DenseF64ArrayAttr::get(&context, {0.5}),
      mlir::DenseI64ArrayAttr::get(&context, {2, 2}), 1);
  auto g = ShardGeometry::get(mesh, {seg});
  EXPECT_FALSE(bool(g));
  llvm::consumeError(g.takeError());
}

} // namespace
