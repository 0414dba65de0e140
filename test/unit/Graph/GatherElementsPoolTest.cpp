//===- GatherElementsPoolTest.cpp - gather_elements, 3-d pools, math ops --===//
//
// Sharding rules (printed as ShardingRulesTest.cpp prints them), costs and
// verifiers of gather_elements, of pools over three spatial dims and of
// the trigonometric and rounding ops.
//
//===----------------------------------------------------------------------===//

#include "GraphOpFixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace weft::graph;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

class GatherElementsPoolTest : public weft::graph::test::GraphOpTest {};

// A loss's pick of the target log-probability: split along the batch (both
// operands have it whole), never along the gathered classes.
TEST_F(GatherElementsPoolTest, GatherElementsSplitsTheBatchNotTheAxis) {
  auto v = variantsOf("%x: tensor<4x8xf32>, %i: tensor<4x1xi64>",
                      "%y = graph.gather_elements %x, %i {axis = 1 : i64} : "
                      "(tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "gather_elements.replicate: (id, id) -> (id)",
                     "gather_elements.split: (gather(0), gather(0)) -> "
                     "(gather(0))",
                     "gather_elements.partial: (sum, id) -> (sum)",
                     "gather_elements.partial: (max, id) -> (max)",
                 }));
}

// Split along the gather axis, the indices' shards read the whole data;
// a dim where the indices are smaller than the data has no split (shard k
// of the indices would need rows of another shard of the data).
TEST_F(GatherElementsPoolTest, GatherElementsSplitsIndicesAlongTheAxis) {
  auto v = variantsOf("%x: tensor<4x8xf32>, %i: tensor<6x8xi64>",
                      "%y = graph.gather_elements %x, %i {axis = 0 : i64} : "
                      "(tensor<4x8xf32>, tensor<6x8xi64>) -> tensor<6x8xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "gather_elements.replicate: (id, id) -> (id)",
                     "gather_elements.split-indices: (id, gather(0)) -> "
                     "(gather(0))",
                     "gather_elements.split: (gather(1), gather(1)) -> "
                     "(gather(1))",
                     "gather_elements.partial: (sum, id) -> (sum)",
                     "gather_elements.partial: (max, id) -> (max)",
                 }));
  v = variantsOf("%x: tensor<4x8xf32>, %i: tensor<6x5xi64>",
                 "%y = graph.gather_elements %x, %i {axis = 0 : i64} : "
                 "(tensor<4x8xf32>, tensor<6x5xi64>) -> tensor<6x5xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "gather_elements.replicate: (id, id) -> (id)",
                     "gather_elements.split-indices: (id, gather(0)) -> "
                     "(gather(0))",
                     "gather_elements.partial: (sum, id) -> (sum)",
                     "gather_elements.partial: (max, id) -> (max)",
                 }));
}

TEST_F(GatherElementsPoolTest, GatherElementsVerifier) {
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>, %i: tensor<4x9xi64>",
                     "%y = graph.gather_elements %x, %i {axis = 0 : i64} : "
                     "(tensor<4x8xf32>, tensor<4x9xi64>) -> tensor<4x9xf32>"));
  EXPECT_THAT(error, HasSubstr("larger than the data"));
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>, %i: tensor<4xi64>",
                     "%y = graph.gather_elements %x, %i {axis = 0 : i64} : "
                     "(tensor<4x8xf32>, tensor<4xi64>) -> tensor<4xf32>"));
  EXPECT_THAT(error, HasSubstr("the data's rank"));
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>, %i: tensor<4x8xi64>",
                     "%y = graph.gather_elements %x, %i {axis = 2 : i64} : "
                     "(tensor<4x8xf32>, tensor<4x8xi64>) -> tensor<4x8xf32>"));
  EXPECT_THAT(error, HasSubstr("out of range"));
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>, %i: tensor<4x2xi64>",
                     "%y = graph.gather_elements %x, %i {axis = 1 : i64} : "
                     "(tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x8xf32>"));
  EXPECT_THAT(error, HasSubstr("expected result shape [4x2]"));
}

// The indices are read and kept for the backward scatter-add; one flop per
// result element backward.
TEST_F(GatherElementsPoolTest, GatherElementsCost) {
  mlir::Operation *op =
      parse("%x: tensor<4x8xf32>, %i: tensor<4x2xi64>",
            "%y = graph.gather_elements %x, %i {axis = 1 : i64} : "
            "(tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>");
  ASSERT_TRUE(op) << error;
  OpCost cost = llvm::cast<CostOpInterface>(op).getGlobalCost();
  EXPECT_EQ(cost.opClass, OpClass::Gather);
  EXPECT_DOUBLE_EQ(cost.backwardFlops, 8);
  EXPECT_DOUBLE_EQ(cost.keptBytes, 8 * 8);
  EXPECT_DOUBLE_EQ(cost.forwardBytes, 2 * 8 * 4 + 8 * 8);
}

TEST_F(GatherElementsPoolTest, ThreeDimensionalPools) {
  const char *pool = "%y = graph.avg_pool %x {kernel = array<i64: 2, 2, 2>, "
                     "strides = array<i64: 2, 1, 2>, pads = array<i64: 0, 0, "
                     "1, 0, 1, 1>, dilations = array<i64: 1, 2, 1>} : "
                     "tensor<2x3x4x5x6xf32> -> tensor<2x3x2x4x4xf32>";
  // D: (4 - 2) / 2 + 1 = 2; H: (5 + 1 - 3) / 1 + 1 = 4; W: (6 + 2 - 2) / 2
  // + 1 = 4.
  auto v = variantsOf("%x: tensor<2x3x4x5x6xf32>", pool);
  EXPECT_THAT(v, ElementsAreArray({
                     "avg_pool.replicate: (id) -> (id)",
                     "avg_pool.split-batch: (gather(0)) -> (gather(0))",
                     "avg_pool.split-channels: (gather(1)) -> (gather(1))",
                     "avg_pool.partial: (sum) -> (sum)",
                 }));
  OpCost cost =
      llvm::cast<CostOpInterface>(parse("%x: tensor<2x3x4x5x6xf32>", pool))
          .getGlobalCost();
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 2 * 3 * 2 * 4 * 4 * 8);
  EXPECT_FALSE(parse("%x: tensor<2x3x4x5x6xf32>",
                     "%y = graph.max_pool %x {kernel = array<i64: 2, 2>, "
                     "strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, "
                     "0>} : tensor<2x3x4x5x6xf32> -> tensor<2x3x3x4x5xf32>"));
  EXPECT_THAT(error, HasSubstr("expected a positive 3-d kernel"));
  EXPECT_FALSE(parse("%x: tensor<2x3x4x5x6xf32>",
                     "%y = graph.max_pool %x {kernel = array<i64: 2, 2, 2>, "
                     "strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, "
                     "0, 0>} : tensor<2x3x4x5x6xf32> -> "
                     "tensor<2x3x3x4x5xf32>"));
  EXPECT_THAT(error, HasSubstr("3 strides and 6 pads"));
  EXPECT_FALSE(parse("%x: tensor<2x3x4x5x6xf32>",
                     "%y = graph.max_pool %x {kernel = array<i64: 2, 2, 2>, "
                     "strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, "
                     "0, 0, 0, 0>} : tensor<2x3x4x5x6xf32> -> "
                     "tensor<2x3x3x4x4xf32>"));
  EXPECT_THAT(error, HasSubstr("expected result shape [2x3x3x4x5]"));
}

// Trigonometric functions keep their input (or result) for the backward;
// the roundings keep nothing (their gradient is zero). None is linear.
TEST_F(GatherElementsPoolTest,
       MathOpsSplitAnyDimAndKeepWhatTheirBackwardReads) {
  auto cost = [&](llvm::StringRef op) {
    std::string body = ("%y = graph." + op + " %x : tensor<4x8xf32>").str();
    mlir::Operation *o = parse("%x: tensor<4x8xf32>", body);
    EXPECT_TRUE(o) << error;
    return o ? llvm::cast<CostOpInterface>(o).getGlobalCost() : OpCost();
  };
  EXPECT_DOUBLE_EQ(cost("sin").keptBytes, 4 * 32);
  EXPECT_DOUBLE_EQ(cost("tan").keptBytes, 4 * 32);
  EXPECT_DOUBLE_EQ(cost("atanh").keptBytes, 4 * 32);
  EXPECT_DOUBLE_EQ(cost("floor").keptBytes, 0);
  EXPECT_DOUBLE_EQ(cost("round").backwardFlops, 0);
  for (const char *op : {"cos", "acosh", "ceil"}) {
    auto v =
        variantsOf("%x: tensor<4x8xf32>", ("%y = graph." + std::string(op) +
                                           " %x : "
                                           "tensor<4x8xf32>"));
    std::string name = op;
    EXPECT_THAT(v, ElementsAreArray({
                       name + ".replicate: (id) -> (id)",
                       name + ".split: (gather(0)) -> (gather(0))",
                       name + ".split: (gather(1)) -> (gather(1))",
                   }));
  }
}

} // namespace
