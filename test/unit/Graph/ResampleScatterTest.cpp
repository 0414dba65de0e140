//===- ResampleScatterTest.cpp - conv_transpose2d, resize, scatters -------===//
//
// Sharding rules (as ShardingRulesTest.cpp prints them), costs and
// verifiers of the transposed convolution, resize and the two scatters.
//
//===----------------------------------------------------------------------===//

#include "GraphOpFixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace weft::graph;
using ::testing::ElementsAreArray;

namespace {

class ResampleScatterTest : public weft::graph::test::GraphOpTest {};

constexpr const char *kConvT =
    "%y = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, "
    "pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, "
    "output_padding = array<i64: 1, 1>, group = 1 : i64} : "
    "(tensor<8x6x5x5xf32>, tensor<6x4x3x3xf32>, tensor<4xf32>) -> "
    "tensor<8x4x10x10xf32>";
constexpr const char *kConvTArgs =
    "%x: tensor<8x6x5x5xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<4xf32>";

// conv2d's rules with the weight's channel dims swapped: the weight is
// C × O × KH × KW, so output channels split weight dim 1 and input
// channels weight dim 0.
TEST_F(ResampleScatterTest, ConvTransposeSplitsBatchAndChannels) {
  EXPECT_THAT(
      variantsOf(kConvTArgs, kConvT),
      ElementsAreArray({
          "conv_transpose2d.replicate: (id, id, id) -> (id)",
          "conv_transpose2d.split-batch: (gather(0), id, id) -> (gather(0))",
          "conv_transpose2d.split-out-channels: (id, gather(1), gather(0)) "
          "-> (gather(1))",
          "conv_transpose2d.split-in-channels: (gather(1), gather(0), id "
          "once) -> (sum)",
          "conv_transpose2d.partial-input: (sum, id, id once) -> (sum)",
          "conv_transpose2d.partial-weight: (id, sum, id once) -> (sum)",
      }));
}

// 3 groups of 2 input and 4 output channels: whole groups only.
TEST_F(ResampleScatterTest, GroupedConvTransposeSplitsWholeGroups) {
  auto v = variantsOf(
      "%x: tensor<2x6x4x4xf32>, %w: tensor<6x4x1x1xf32>",
      "%y = graph.conv_transpose2d %x, %w {strides = array<i64: 1, 1>, pads "
      "= array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, "
      "output_padding = array<i64: 0, 0>, group = 3 : i64} : "
      "(tensor<2x6x4x4xf32>, tensor<6x4x1x1xf32>) -> tensor<2x12x4x4xf32>");
  EXPECT_THAT(v, ::testing::Contains(
                     "conv_transpose2d.split-groups: (gather(1, align 2), "
                     "gather(0, align 2)) -> (gather(1, align 4))"));
  EXPECT_THAT(v, ::testing::Not(::testing::Contains(
                     ::testing::HasSubstr("split-in-channels"))));
}

// Each of the 8·6·5·5 input elements scales a 4·3·3 kernel; one add per
// output for the bias; the backward is twice the forward.
TEST_F(ResampleScatterTest, ConvTransposeCountsInputsTimesKernel) {
  OpCost cost = costOf(kConvTArgs, kConvT);
  EXPECT_EQ(cost.opClass, OpClass::Conv);
  EXPECT_DOUBLE_EQ(cost.forwardFlops,
                   2.0 * (8 * 6 * 5 * 5) * (4 * 3 * 3) + 8 * 4 * 10 * 10);
  EXPECT_DOUBLE_EQ(cost.backwardFlops, 2 * cost.forwardFlops);
  EXPECT_DOUBLE_EQ(cost.keptBytes, 4.0 * (8 * 6 * 5 * 5 + 6 * 4 * 3 * 3));
}

TEST_F(ResampleScatterTest, ConvTransposeVerifierChecksTheResultShape) {
  EXPECT_FALSE(parse(
      "%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf32>",
      "%y = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads "
      "= array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, "
      "output_padding = array<i64: 0, 0>, group = 1 : i64} : "
      "(tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x6x7xf32>"));
  EXPECT_THAT(error, ::testing::HasSubstr("expected result shape [1x1x7x7]"));
}

constexpr const char *kResize =
    "%y = graph.resize %x {mode = \"linear\", coordinate_transformation_mode "
    "= \"half_pixel\", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : "
    "(tensor<4x3x8x8xf32>) -> tensor<4x3x16x16xf32>";

// Only the copied dims (scale 1) split; the op is linear: partial sums.
TEST_F(ResampleScatterTest, ResizeSplitsCopiedDims) {
  EXPECT_THAT(variantsOf("%x: tensor<4x3x8x8xf32>", kResize),
              ElementsAreArray({
                  "resize.replicate: (id) -> (id)",
                  "resize.split: (gather(0)) -> (gather(0))",
                  "resize.split: (gather(1)) -> (gather(1))",
                  "resize.partial: (sum) -> (sum)",
              }));
}

// Nearest only copies elements: max partials pass too; run-time scales
// stay whole.
TEST_F(ResampleScatterTest, NearestResizeWithRuntimeScales) {
  auto v = variantsOf(
      "%x: tensor<2x8xf32>, %s: tensor<2xf32>",
      "%y = graph.resize %x, %s {mode = \"nearest\", "
      "coordinate_transformation_mode = \"asymmetric\", scales = array<f64: "
      "1.0, 2.0>} : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<2x16xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "resize.replicate: (id, id) -> (id)",
                     "resize.split: (gather(0), id) -> (gather(0))",
                     "resize.partial: (sum, id) -> (sum)",
                     "resize.partial: (max, id) -> (max)",
                 }));
}

// Bilinear: two taps per resized dim, a multiply-add each; nothing kept.
TEST_F(ResampleScatterTest, ResizeCountsTaps) {
  OpCost cost = costOf("%x: tensor<4x3x8x8xf32>", kResize);
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 2.0 * 4 * (4 * 3 * 16 * 16));
  EXPECT_DOUBLE_EQ(cost.backwardFlops, cost.forwardFlops);
  EXPECT_DOUBLE_EQ(cost.keptBytes, 0);
  EXPECT_DOUBLE_EQ(cost.forwardBytes, 4.0 * (4 * 3 * 8 * 8 + 4 * 3 * 16 * 16));
}

TEST_F(ResampleScatterTest, ResizeVerifierChecksExtentsAndNames) {
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>",
                     "%y = graph.resize %x {mode = \"linear\", "
                     "coordinate_transformation_mode = \"half_pixel\", "
                     "scales = array<f64: 1.0, 0.6>} : (tensor<4x8xf32>) -> "
                     "tensor<4x5xf32>"));
  EXPECT_THAT(error, ::testing::HasSubstr("dim 1 of extent 8 and scale 0.6"));
  EXPECT_FALSE(parse("%x: tensor<4x8xf32>",
                     "%y = graph.resize %x {mode = \"area\", "
                     "coordinate_transformation_mode = \"half_pixel\", "
                     "scales = array<f64: 1.0, 1.0>} : (tensor<4x8xf32>) -> "
                     "tensor<4x8xf32>"));
  EXPECT_THAT(error, ::testing::HasSubstr("unknown mode 'area'"));
}

// A batch of rows, indices along axis 1: the batch dim splits all three
// operands; the indexed axis splits the data only (offsets); none and add
// are linear in data and updates together.
TEST_F(ResampleScatterTest, ScatterElementsSplitsBatchAndIndexedAxis) {
  auto v = variantsOf(
      "%d: tensor<4x16xf32>, %i: tensor<4x3xi64>, %u: tensor<4x3xf32>",
      "%y = graph.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "
      "\"add\"} : (tensor<4x16xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> "
      "tensor<4x16xf32>");
  EXPECT_THAT(
      v, ElementsAreArray({
             "scatter_elements.replicate: (id, id, id) -> (id)",
             "scatter_elements.split: (gather(0), gather(0), gather(0)) -> "
             "(gather(0))",
             "scatter_elements.split-indexed: (gather(1), id, id) -> "
             "(gather(1)) offset",
             "scatter_elements.partial: (sum, id, sum) -> (sum)",
             "scatter_elements.partial-once: (sum, id, id once) -> (sum)",
             "scatter_elements.partial-once: (id once, id, sum) -> (sum)",
         }));
}

// Tuples of 2 index [B, S]; the slices of H split data and updates.
TEST_F(ResampleScatterTest, ScatterNdSplitsIndexedAndSliceDims) {
  auto v = variantsOf(
      "%d: tensor<4x8x6xf32>, %i: tensor<5x2xi64>, %u: tensor<5x6xf32>",
      "%y = graph.scatter_nd %d, %i, %u {reduction = \"mul\"} : "
      "(tensor<4x8x6xf32>, tensor<5x2xi64>, tensor<5x6xf32>) -> "
      "tensor<4x8x6xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "scatter_nd.replicate: (id, id, id) -> (id)",
                     "scatter_nd.split-indexed: (gather(0), id, id) -> "
                     "(gather(0)) offset",
                     "scatter_nd.split-indexed: (gather(1), id, id) -> "
                     "(gather(1)) offset",
                     "scatter_nd.split-slices: (gather(2), id, gather(1)) -> "
                     "(gather(2))",
                     "scatter_nd.partial-data: (sum, id, id) -> (sum)",
                 }));
}

// An integer scatter (labels) has no partial variants; max keeps max.
TEST_F(ResampleScatterTest, ScatterPartialsFollowTheReduction) {
  auto ints = variantsOf(
      "%d: tensor<4x8xi64>, %i: tensor<4x1x2xi64>, %u: tensor<4x1xi64>",
      "%y = graph.scatter_nd %d, %i, %u : (tensor<4x8xi64>, "
      "tensor<4x1x2xi64>, tensor<4x1xi64>) -> tensor<4x8xi64>");
  EXPECT_THAT(ints, ::testing::Not(
                        ::testing::Contains(::testing::HasSubstr("partial"))));
  auto max = variantsOf(
      "%d: tensor<4x8xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>",
      "%y = graph.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "
      "\"max\"} : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> "
      "tensor<4x8xf32>");
  EXPECT_EQ(max.back(), "scatter_elements.partial: (max, id, max) -> (max)");
  EXPECT_THAT(
      max, ::testing::Not(::testing::Contains(::testing::HasSubstr("(sum"))));
}

// One combine per update; mul keeps data and updates for its backward.
TEST_F(ResampleScatterTest, ScatterCost) {
  const char *args =
      "%d: tensor<4x16xf32>, %i: tensor<4x3xi64>, %u: tensor<4x3xf32>";
  OpCost mul = costOf(args, "%y = graph.scatter_elements %d, %i, %u {axis = "
                            "1 : i64, reduction = \"mul\"} : "
                            "(tensor<4x16xf32>, tensor<4x3xi64>, "
                            "tensor<4x3xf32>) -> tensor<4x16xf32>");
  EXPECT_EQ(mul.opClass, OpClass::Gather);
  EXPECT_DOUBLE_EQ(mul.forwardFlops, 12);
  EXPECT_DOUBLE_EQ(mul.keptBytes, 8.0 * 12 + 4.0 * 64 + 4.0 * 12);
  OpCost none = costOf(args, "%y = graph.scatter_elements %d, %i, %u {axis = "
                             "1 : i64} : (tensor<4x16xf32>, tensor<4x3xi64>, "
                             "tensor<4x3xf32>) -> tensor<4x16xf32>");
  EXPECT_DOUBLE_EQ(none.forwardFlops, 0);
  EXPECT_DOUBLE_EQ(none.keptBytes, 8.0 * 12);
}

TEST_F(ResampleScatterTest, ScatterVerifiers) {
  EXPECT_FALSE(parse(
      "%d: tensor<4x8xf32>, %i: tensor<3x2xi64>, %u: tensor<3x8xf32>",
      "%y = graph.scatter_nd %d, %i, %u : (tensor<4x8xf32>, tensor<3x2xi64>, "
      "tensor<3x8xf32>) -> tensor<4x8xf32>"));
  EXPECT_THAT(error, ::testing::HasSubstr("expected updates of shape [3]"));
  EXPECT_FALSE(
      parse("%d: tensor<4x8xf32>, %i: tensor<5x2xi64>, %u: tensor<5x2xf32>",
            "%y = graph.scatter_elements %d, %i, %u {axis = 1 : i64} : "
            "(tensor<4x8xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> "
            "tensor<4x8xf32>"));
  EXPECT_THAT(error, ::testing::HasSubstr("exceed data [4x8] in dim 0"));
}

} // namespace
