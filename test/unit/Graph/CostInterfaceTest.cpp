//===- CostInterfaceTest.cpp - CostOpInterface against hand counts --------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace weft::graph;

namespace {

class CostInterfaceTest : public ::testing::Test {
protected:
  CostInterfaceTest() {
    context.loadDialect<GraphDialect, mlir::func::FuncDialect>();
  }

  /// Parses `body` as the body of a function with `args` and returns the
  /// first op of dialect graph that is not a leaf.
  CostOpInterface parseOp(llvm::StringRef args, llvm::StringRef body) {
    std::string text =
        ("func.func @f(" + args + ") {\n" + body + "\n  return\n}\n").str();
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    CostOpInterface found;
    module->walk([&](CostOpInterface op) {
      if (!found && !llvm::isa<ParameterOp, BufferOp, ConstantOp>(op))
        found = op;
    });
    EXPECT_TRUE(found);
    return found;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(CostInterfaceTest, MatMulIsTwoMNKForwardFourMNKBackward) {
  const double m = 32 * 128, k = 768, n = 3072;
  auto op = parseOp("%x: tensor<32x128x768xf32>, %w: tensor<768x3072xf32>",
                    "%y = graph.matmul %x, %w : (tensor<32x128x768xf32>, "
                    "tensor<768x3072xf32>) -> tensor<32x128x3072xf32>");
  OpCost cost = op.getGlobalCost();
  EXPECT_EQ(cost.opClass, OpClass::MatMul);
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 2 * m * n * k);
  EXPECT_DOUBLE_EQ(cost.backwardFlops, 4 * m * n * k);
  // Reads X and W, writes Y, all fp32.
  EXPECT_DOUBLE_EQ(cost.forwardBytes, 4 * (m * k + k * n + m * n));
  // The backward needs both operands.
  EXPECT_DOUBLE_EQ(cost.keptBytes, 4 * (m * k + k * n));
}

TEST_F(CostInterfaceTest, MatMulOnShardShapes) {
  auto op = parseOp("%x: tensor<8x16xf32>, %w: tensor<16x4xf32>",
                    "%y = graph.matmul %x, %w : (tensor<8x16xf32>, "
                    "tensor<16x4xf32>) -> tensor<8x4xf32>");
  // A contraction split in two: each device multiplies 8x8 by 8x4.
  ShardShapes shard;
  shard.operands = {TensorShape{{8, 8}, 4}, TensorShape{{8, 4}, 4}};
  shard.results = {TensorShape{{8, 4}, 4}};
  OpCost cost = op.getCost(shard);
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 2.0 * 8 * 4 * 8);
  EXPECT_DOUBLE_EQ(cost.forwardFlops * 2, op.getGlobalCost().forwardFlops);
}

TEST_F(CostInterfaceTest, BatchedMatMulCountsEveryBatch) {
  auto op = parseOp("%q: tensor<2x12x128x64xf32>, %k: tensor<2x12x64x128xf32>",
                    "%s = graph.matmul %q, %k : (tensor<2x12x128x64xf32>, "
                    "tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>");
  EXPECT_DOUBLE_EQ(op.getGlobalCost().forwardFlops,
                   2.0 * 2 * 12 * 128 * 128 * 64);
}

TEST_F(CostInterfaceTest, Conv2dCountsWindowTimesOutputs) {
  auto op = parseOp(
      "%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>",
      "%y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = "
      "array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} "
      ": (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>");
  OpCost cost = op.getGlobalCost();
  EXPECT_EQ(cost.opClass, OpClass::Conv);
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 2.0 * (2 * 4 * 8 * 8) * (3 * 3 * 3));
  EXPECT_DOUBLE_EQ(cost.backwardFlops, 2 * cost.forwardFlops);
}

TEST_F(CostInterfaceTest, ElementwiseKeepsWhatItsBackwardReads) {
  auto relu =
      parseOp("%x: tensor<4x8xf32>", "%y = graph.relu %x : tensor<4x8xf32>");
  EXPECT_EQ(relu.getGlobalCost().opClass, OpClass::Elementwise);
  EXPECT_DOUBLE_EQ(relu.getGlobalCost().forwardFlops, 32);
  EXPECT_DOUBLE_EQ(relu.getGlobalCost().keptBytes, 32 * 4);

  auto add = parseOp("%x: tensor<4x8xf32>, %b: tensor<8xf32>",
                     "%y = graph.add %x, %b : (tensor<4x8xf32>, "
                     "tensor<8xf32>) -> tensor<4x8xf32>");
  // Addition needs nothing kept: its gradient is the output gradient.
  EXPECT_DOUBLE_EQ(add.getGlobalCost().keptBytes, 0);
  EXPECT_DOUBLE_EQ(add.getGlobalCost().forwardBytes, 4 * (32 + 8 + 32));
}

TEST_F(CostInterfaceTest, ViewsAreFree) {
  auto op = parseOp("%x: tensor<4x8xf32>",
                    "%y = graph.reshape %x : tensor<4x8xf32> -> "
                    "tensor<32xf32>");
  OpCost cost = op.getGlobalCost();
  EXPECT_EQ(cost.opClass, OpClass::Free);
  EXPECT_DOUBLE_EQ(cost.forwardFlops + cost.forwardBytes + cost.keptBytes, 0);
}

TEST_F(CostInterfaceTest, DropoutKeepsAByteMaskPerElement) {
  auto op = parseOp("%x: tensor<4x8xf32>",
                    "%y = graph.dropout %x {ratio = 0.1 : f64} : "
                    "tensor<4x8xf32>");
  EXPECT_DOUBLE_EQ(op.getGlobalCost().keptBytes, 32);
}

TEST_F(CostInterfaceTest, HalfPrecisionHalvesBytesNotFlops) {
  auto f32 = parseOp("%x: tensor<64x64xf32>, %w: tensor<64x64xf32>",
                     "%y = graph.matmul %x, %w : (tensor<64x64xf32>, "
                     "tensor<64x64xf32>) -> tensor<64x64xf32>");
  OpCost full = f32.getGlobalCost();
  auto bf16 = parseOp("%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>",
                      "%y = graph.matmul %x, %w : (tensor<64x64xbf16>, "
                      "tensor<64x64xbf16>) -> tensor<64x64xbf16>");
  OpCost half = bf16.getGlobalCost();
  EXPECT_DOUBLE_EQ(half.forwardFlops, full.forwardFlops);
  EXPECT_DOUBLE_EQ(half.forwardBytes * 2, full.forwardBytes);
}

TEST_F(CostInterfaceTest, SoftmaxIsAReduction) {
  auto op = parseOp("%x: tensor<2x4x16x16xf32>",
                    "%y = graph.softmax %x {axis = -1 : i64} : "
                    "tensor<2x4x16x16xf32>");
  OpCost cost = op.getGlobalCost();
  EXPECT_EQ(cost.opClass, OpClass::Reduction);
  EXPECT_DOUBLE_EQ(cost.forwardFlops, 5.0 * 2 * 4 * 16 * 16);
}

} // namespace
