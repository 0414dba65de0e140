//===- ShardingRulesTest.cpp - ShardingRuleOpInterface per op family ------===//
//
// Each test lists an op's variants as derived by hand from docs/Design.md §3.3
// (the derivation of the less obvious ones is in the comments) and compares
// them, in the interface's order, with what the op enumerates. Variants print
// as `name: (operand layouts) -> (result layouts)` with `id`, `gather(d)`,
// `gather(d, align a)`, `sum`, `max`, a trailing `once` on an operand counted
// once, `offset` when the recipe needs the global offset, and the recipe's
// all-reduces of statistics.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace weft::graph;
using ::testing::ElementsAreArray;

namespace {

class ShardingRulesTest : public ::testing::Test {
protected:
  ShardingRulesTest() {
    context.loadDialect<GraphDialect, mlir::func::FuncDialect>();
  }

  /// Parses `body` as the body of a function with `args` and returns the
  /// variants of its last graph op, printed one per string.
  std::vector<std::string> variantsOf(llvm::StringRef args,
                                      llvm::StringRef body) {
    std::string text =
        ("func.func @f(" + args + ") {\n" + body + "\n  return\n}\n").str();
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    ShardingRuleOpInterface found;
    module->walk([&](ShardingRuleOpInterface op) { found = op; });
    EXPECT_TRUE(found);
    llvm::SmallVector<ShardingVariant, 8> variants;
    found.getShardingVariants(variants);
    std::vector<std::string> printed;
    for (const ShardingVariant &v : variants) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << v;
      printed.push_back(os.str());
    }
    return printed;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

TEST_F(ShardingRulesTest, MatMulSplitsRowsColsBatchAndContraction) {
  auto v = variantsOf("%x: tensor<32x128x768xf32>, %w: tensor<768x3072xf32>",
                      "%y = graph.matmul %x, %w : (tensor<32x128x768xf32>, "
                      "tensor<768x3072xf32>) -> tensor<32x128x3072xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "matmul.replicate: (id, id) -> (id)",
                     // The weight has no batch dim: it stays whole.
                     "matmul.split-batch: (gather(0), id) -> (gather(0))",
                     "matmul.split-rows: (gather(1), id) -> (gather(1))",
                     "matmul.split-cols: (id, gather(1)) -> (gather(2))",
                     "matmul.split-contraction: (gather(2), gather(0)) -> "
                     "(sum)",
                     "matmul.partial-lhs: (sum, id) -> (sum)",
                     "matmul.partial-rhs: (id, sum) -> (sum)",
                 }));
}

TEST_F(ShardingRulesTest, MatMulBatchDimsBroadcast) {
  // [4,8,16] x [3,1,16,5] -> [3,4,8,5]: result batch dim 0 exists only in
  // the rhs; batch dim 1 (extent 4) is the lhs's dim 0 and a broadcast 1 in
  // the rhs.
  auto v = variantsOf("%a: tensor<4x8x16xf32>, %b: tensor<3x1x16x5xf32>",
                      "%y = graph.matmul %a, %b : (tensor<4x8x16xf32>, "
                      "tensor<3x1x16x5xf32>) -> tensor<3x4x8x5xf32>");
  ASSERT_GE(v.size(), 3u);
  EXPECT_EQ(v[1], "matmul.split-batch: (id, gather(0)) -> (gather(0))");
  EXPECT_EQ(v[2], "matmul.split-batch: (gather(0), id) -> (gather(1))");
  EXPECT_EQ(v[3], "matmul.split-rows: (gather(1), id) -> (gather(2))");
  EXPECT_EQ(v[4], "matmul.split-cols: (id, gather(3)) -> (gather(3))");
  EXPECT_EQ(v[5], "matmul.split-contraction: (gather(2), gather(2)) -> (sum)");
}

TEST_F(ShardingRulesTest, Conv2dSplitsBatchChannelsAndInputChannels) {
  auto v = variantsOf(
      "%x: tensor<8x3x16x16xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>",
      "%y = graph.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = "
      "array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} "
      ": (tensor<8x3x16x16xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> "
      "tensor<8x4x16x16xf32>");
  EXPECT_THAT(
      v, ElementsAreArray({
             "conv2d.replicate: (id, id, id) -> (id)",
             "conv2d.split-batch: (gather(0), id, id) -> (gather(0))",
             "conv2d.split-out-channels: (id, gather(0), gather(0)) -> "
             "(gather(1))",
             // Σ over input channels: partial sums, the bias added once.
             "conv2d.split-in-channels: (gather(1), gather(1), id once) -> "
             "(sum)",
             "conv2d.partial-input: (sum, id, id once) -> (sum)",
             "conv2d.partial-weight: (id, sum, id once) -> (sum)",
         }));
}

TEST_F(ShardingRulesTest, GroupedConvSplitsWholeGroups) {
  // 4 groups of 2 input and 3 output channels: shards of input channels are
  // multiples of 2, of output channels multiples of 3.
  auto v = variantsOf(
      "%x: tensor<2x8x4x4xf32>, %w: tensor<12x2x1x1xf32>",
      "%y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = "
      "array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} "
      ": (tensor<2x8x4x4xf32>, tensor<12x2x1x1xf32>) -> "
      "tensor<2x12x4x4xf32>");
  EXPECT_THAT(
      v, ::testing::Contains("conv2d.split-groups: (gather(1, align 2), "
                             "gather(0, align 3)) -> (gather(1, align 3))"));
  EXPECT_THAT(v, ::testing::Not(::testing::Contains(
                     ::testing::HasSubstr("split-in-channels"))));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(ShardingRulesTest, AddSplitsConsistentlyAndAddsAWholeBiasOnce) {
  auto v = variantsOf("%x: tensor<4x8x16xf32>, %b: tensor<16xf32>",
                      "%y = graph.add %x, %b : (tensor<4x8x16xf32>, "
                      "tensor<16xf32>) -> tensor<4x8x16xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "add.replicate: (id, id) -> (id)",
                     // The bias lacks dims 0 and 1: it stays whole.
                     "add.split: (gather(0), id) -> (gather(0))",
                     "add.split: (gather(1), id) -> (gather(1))",
                     "add.split: (gather(2), gather(0)) -> (gather(2))",
                     "add.partial: (sum, sum) -> (sum)",
                     "add.partial-once: (sum, id once) -> (sum)",
                     "add.partial-once: (id once, sum) -> (sum)",
                 }));
}

TEST_F(ShardingRulesTest, BroadcastOneStaysWhole) {
  // A size-1 dim of an operand is broadcast, not split.
  auto v = variantsOf("%x: tensor<4x8xf32>, %m: tensor<1x8xf32>",
                      "%y = graph.sub %x, %m : (tensor<4x8xf32>, "
                      "tensor<1x8xf32>) -> tensor<4x8xf32>");
  EXPECT_EQ(v[1], "sub.split: (gather(0), id) -> (gather(0))");
  EXPECT_EQ(v[2], "sub.split: (gather(1), gather(1)) -> (gather(1))");
}

TEST_F(ShardingRulesTest, PartialsOnlyWhereLinear) {
  const char *args = "%x: tensor<4x8xf32>, %y: tensor<4x8xf32>";
  auto partials = [&](llvm::StringRef op) {
    std::string body = ("%z = graph." + op +
                        " %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> "
                        "tensor<4x8xf32>")
                           .str();
    std::vector<std::string> out;
    for (std::string &s : variantsOf(args, body))
      if (s.find("partial") != std::string::npos)
        out.push_back(s);
    return out;
  };
  // p·w and w·p are linear; p·q is not.
  EXPECT_THAT(
      partials("mul"),
      ElementsAreArray({"mul.partial-times-whole: (sum, id) -> (sum)",
                        "mul.partial-times-whole: (id, sum) -> (sum)"}));
  // Linear in the numerator only.
  EXPECT_THAT(partials("div"),
              ElementsAreArray({"div.partial-by-whole: (sum, id) -> (sum)"}));
  EXPECT_THAT(partials("pow"), ::testing::IsEmpty());
  EXPECT_THAT(partials("min"), ::testing::IsEmpty());
  // The maximum of partial maxima.
  EXPECT_THAT(partials("max"),
              ElementsAreArray({"max.partial: (max, max) -> (max)"}));
}

TEST_F(ShardingRulesTest, UnaryOpsSplitAnyDimAndOnlyNegIsLinear) {
  auto relu =
      variantsOf("%x: tensor<4x8xf32>", "%y = graph.relu %x : tensor<4x8xf32>");
  EXPECT_THAT(relu,
              ElementsAreArray({"relu.replicate: (id) -> (id)",
                                "relu.split: (gather(0)) -> (gather(0))",
                                "relu.split: (gather(1)) -> (gather(1))"}));
  auto neg =
      variantsOf("%x: tensor<4x8xf32>", "%y = graph.neg %x : tensor<4x8xf32>");
  EXPECT_EQ(neg.back(), "neg.partial: (sum) -> (sum)");
}

TEST_F(ShardingRulesTest, CastOfPartialsOnlyBetweenFloats) {
  auto toHalf =
      variantsOf("%x: tensor<4xf32>",
                 "%y = graph.cast %x : tensor<4xf32> -> tensor<4xf16>");
  EXPECT_EQ(toHalf.back(), "cast.partial: (sum) -> (sum)");
  auto fromInt =
      variantsOf("%x: tensor<4xi64>",
                 "%y = graph.cast %x : tensor<4xi64> -> tensor<4xf32>");
  EXPECT_THAT(fromInt, ElementsAreArray({"cast.replicate: (id) -> (id)",
                                         "cast.split: (gather(0)) -> "
                                         "(gather(0))"}));
}

TEST_F(ShardingRulesTest, CompareAndSelect) {
  auto cmp = variantsOf(
      "%a: tensor<4x8xi64>, %z: tensor<i64>",
      "%m = graph.compare %a, %z {predicate = \"eq\"} : (tensor<4x8xi64>, "
      "tensor<i64>) -> tensor<4x8xi1>");
  EXPECT_THAT(cmp, ElementsAreArray({
                       "compare.replicate: (id, id) -> (id)",
                       "compare.split: (gather(0), id) -> (gather(0))",
                       "compare.split: (gather(1), id) -> (gather(1))",
                   }));
  // A causal mask [1,8,8] broadcast over 4 score matrices.
  auto sel = variantsOf(
      "%c: tensor<1x8x8xi1>, %s: tensor<4x8x8xf32>, %n: tensor<f32>",
      "%y = graph.select %c, %s, %n : (tensor<1x8x8xi1>, tensor<4x8x8xf32>, "
      "tensor<f32>) -> tensor<4x8x8xf32>");
  EXPECT_THAT(sel,
              ElementsAreArray({
                  "select.replicate: (id, id, id) -> (id)",
                  "select.split: (id, gather(0), id) -> (gather(0))",
                  "select.split: (gather(1), gather(1), id) -> (gather(1))",
                  "select.split: (gather(2), gather(2), id) -> (gather(2))",
                  // The condition stays whole; a whole branch counts once.
                  "select.partial: (id, sum, sum) -> (sum)",
                  "select.partial-once: (id, sum, id once) -> (sum)",
                  "select.partial-once: (id, id once, sum) -> (sum)",
              }));
}

TEST_F(ShardingRulesTest, DropoutIsKeyedByGlobalIndex) {
  auto v = variantsOf("%x: tensor<4x8xf32>",
                      "%y = graph.dropout %x {ratio = 0.1 : f64} : "
                      "tensor<4x8xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "dropout.replicate: (id) -> (id)",
                     "dropout.split: (gather(0)) -> (gather(0)) offset",
                     "dropout.split: (gather(1)) -> (gather(1)) offset",
                     "dropout.partial: (sum) -> (sum)",
                 }));
}

TEST_F(ShardingRulesTest, LeavesSplitAnyDimOfExtentTwoOrMore) {
  auto w = variantsOf("", "%w = graph.parameter \"w\" : tensor<1x768xf32>");
  EXPECT_THAT(w, ElementsAreArray({"parameter.replicate: () -> (id)",
                                   "parameter.split: () -> (gather(1))"}));
  auto c = variantsOf(
      "", "%c = graph.constant dense<8.0> : tensor<f32> : tensor<f32>");
  EXPECT_THAT(c, ElementsAreArray({"constant.replicate: () -> (id)"}));
}

//===----------------------------------------------------------------------===//
// Softmax, normalisation, reductions, losses
//===----------------------------------------------------------------------===//

TEST_F(ShardingRulesTest, SoftmaxOverASplitDimAllReducesMaxThenSum) {
  auto v = variantsOf("%x: tensor<8x16x32xf32>",
                      "%y = graph.softmax %x {axis = -1 : i64} : "
                      "tensor<8x16x32xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "softmax.replicate: (id) -> (id)",
                     "softmax.split: (gather(0)) -> (gather(0))",
                     "softmax.split: (gather(1)) -> (gather(1))",
                     // One max and one sum per row of 32.
                     "softmax.split-reduced: (gather(2)) -> (gather(2)) "
                     "all_reduce(max, [8x16x1]) all_reduce(sum, [8x16x1])",
                 }));
  auto logsm = variantsOf("%x: tensor<8x16xf32>",
                          "%y = graph.log_softmax %x {axis = 0 : i64} : "
                          "tensor<8x16xf32>");
  EXPECT_EQ(logsm[1], "log_softmax.split-reduced: (gather(0)) -> (gather(0)) "
                      "all_reduce(max, [1x16]) all_reduce(sum, [1x16])");
}

TEST_F(ShardingRulesTest, LayerNorm) {
  auto v = variantsOf(
      "%x: tensor<2x16x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>",
      "%y = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : "
      "f64} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> "
      "tensor<2x16x32xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "layer_norm.replicate: (id, id, id) -> (id)",
                     "layer_norm.split: (gather(0), id, id) -> (gather(0))",
                     "layer_norm.split: (gather(1), id, id) -> (gather(1))",
                     // Mean, then variance, each from all-reduced sums.
                     "layer_norm.split-normalized: (gather(2), gather(0), "
                     "gather(0)) -> (gather(2)) all_reduce(sum, [2x16x1]) "
                     "all_reduce(sum, [2x16x1])",
                 }));
}

TEST_F(ShardingRulesTest, BatchNormTrainingSyncsStatisticsOverTheBatch) {
  const char *args = "%x: tensor<8x4x2x2xf32>, %g: tensor<4xf32>, "
                     "%b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>";
  auto body = [](bool training) {
    return std::string("%y = graph.batch_norm %x, %g, %b, %m, %v {epsilon = "
                       "1.0e-5 : f64, momentum = 0.9 : f64, training = ") +
           (training ? "true" : "false") +
           "} : (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, "
           "tensor<4xf32>, tensor<4xf32>) -> tensor<8x4x2x2xf32>";
  };
  auto train = variantsOf(args, body(true));
  EXPECT_THAT(train,
              ElementsAreArray({
                  "batch_norm.replicate: (id, id, id, id, id) -> (id)",
                  "batch_norm.split-batch-sync-stats: (gather(0), id, id, "
                  "id, id) -> (gather(0)) all_reduce(sum, [4]) "
                  "all_reduce(sum, [4])",
                  "batch_norm.split-channels: (gather(1), gather(0), "
                  "gather(0), gather(0), gather(0)) -> (gather(1))",
                  "batch_norm.split-batch-sync-stats: (gather(2), id, id, "
                  "id, id) -> (gather(2)) all_reduce(sum, [4]) "
                  "all_reduce(sum, [4])",
                  "batch_norm.split-batch-sync-stats: (gather(3), id, id, "
                  "id, id) -> (gather(3)) all_reduce(sum, [4]) "
                  "all_reduce(sum, [4])",
              }));
  auto infer = variantsOf(args, body(false));
  EXPECT_EQ(infer[1], "batch_norm.split-inference: (gather(0), id, id, id, "
                      "id) -> (gather(0))");
}

TEST_F(ShardingRulesTest, ReductionsSplitKeptDimsOrLeavePartials) {
  // Without keepdims, input dim 2 becomes result dim 1.
  auto mean = variantsOf("%x: tensor<4x8x16xf32>",
                         "%y = graph.reduce_mean %x {axes = array<i64: 1>, "
                         "keepdims = false} : tensor<4x8x16xf32> -> "
                         "tensor<4x16xf32>");
  EXPECT_THAT(mean, ElementsAreArray({
                        "reduce_mean.replicate: (id) -> (id)",
                        "reduce_mean.split-kept: (gather(0)) -> (gather(0))",
                        // Local sum divided by the global extent 8.
                        "reduce_mean.split-reduced: (gather(1)) -> (sum)",
                        "reduce_mean.split-kept: (gather(2)) -> (gather(1))",
                        "reduce_mean.partial: (sum) -> (sum)",
                    }));
  auto max =
      variantsOf("%x: tensor<4x8xf32>",
                 "%y = graph.reduce_max %x {axes = array<i64: 1>, "
                 "keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>");
  EXPECT_THAT(max, ElementsAreArray({
                       "reduce_max.replicate: (id) -> (id)",
                       "reduce_max.split-kept: (gather(0)) -> (gather(0))",
                       "reduce_max.split-reduced: (gather(1)) -> (max)",
                       "reduce_max.partial: (max) -> (max)",
                   }));
  // Integer sums have no partial values.
  auto ints =
      variantsOf("%x: tensor<4x8xi64>",
                 "%y = graph.reduce_sum %x {axes = array<i64: 1>, "
                 "keepdims = false} : tensor<4x8xi64> -> tensor<4xi64>");
  EXPECT_THAT(ints, ElementsAreArray({
                        "reduce_sum.replicate: (id) -> (id)",
                        "reduce_sum.split-kept: (gather(0)) -> (gather(0))",
                    }));
}

TEST_F(ShardingRulesTest, CrossEntropyOverBatchAndClasses) {
  auto v = variantsOf(
      "%x: tensor<32x100xf32>, %y: tensor<32xi64>",
      "%l = graph.cross_entropy %x, %y {reduction = \"mean\", ignore_index = "
      "-100 : i64} : (tensor<32x100xf32>, tensor<32xi64>) -> tensor<f32>");
  EXPECT_THAT(
      v, ElementsAreArray({
             "cross_entropy.replicate: (id, id) -> (id)",
             // Ignored labels make the mean's count data-dependent: one
             // scalar all-reduce of the count.
             "cross_entropy.split-batch: (gather(0), gather(0)) -> (sum) "
             "all_reduce(sum, [])",
             // Log-sum-exp per row (32 rows): max, then sum; the target
             // logit picked with the global offset.
             "cross_entropy.split-classes: (gather(1), id) -> (sum) offset "
             "all_reduce(max, [32]) all_reduce(sum, [32])",
         }));
  auto sum =
      variantsOf("%x: tensor<32x100x4xf32>, %y: tensor<32x4xi64>",
                 "%l = graph.cross_entropy %x, %y {reduction = \"sum\"} : "
                 "(tensor<32x100x4xf32>, tensor<32x4xi64>) -> tensor<f32>");
  EXPECT_EQ(sum[1],
            "cross_entropy.split-batch: (gather(0), gather(0)) -> (sum)");
  // A trailing dim of the logits is dim 1 of the labels.
  EXPECT_EQ(sum[2],
            "cross_entropy.split-batch: (gather(2), gather(1)) -> (sum)");
}

TEST_F(ShardingRulesTest, NllLossIsLinearInItsInput) {
  auto v = variantsOf("%x: tensor<32x10xf32>, %y: tensor<32xi64>",
                      "%l = graph.nll_loss %x, %y {reduction = \"mean\"} : "
                      "(tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "nll_loss.replicate: (id, id) -> (id)",
                     "nll_loss.split-batch: (gather(0), gather(0)) -> (sum)",
                     "nll_loss.split-classes: (gather(1), id) -> (sum) offset",
                     "nll_loss.partial: (sum, id) -> (sum)",
                 }));
}

TEST_F(ShardingRulesTest, PoolsSplitBatchAndChannels) {
  auto v = variantsOf("%x: tensor<2x4x8x8xf32>",
                      "%y = graph.global_avg_pool %x : tensor<2x4x8x8xf32> "
                      "-> tensor<2x4x1x1xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "global_avg_pool.replicate: (id) -> (id)",
                     "global_avg_pool.split-batch: (gather(0)) -> (gather(0))",
                     "global_avg_pool.split-channels: (gather(1)) -> "
                     "(gather(1))",
                     "global_avg_pool.partial: (sum) -> (sum)",
                 }));
  auto max =
      variantsOf("%x: tensor<2x4x8x8xf32>",
                 "%y = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = "
                 "array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : "
                 "tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>");
  EXPECT_EQ(max.size(), 3u);
}

TEST_F(ShardingRulesTest, Top2GatingSplitsGroups) {
  auto v = variantsOf(
      "%x: tensor<4x8x16xf32>, %g: tensor<16x4xf32>",
      "%d, %c = graph.top2_gating %x, %g : (tensor<4x8x16xf32>, "
      "tensor<16x4xf32>) -> (tensor<4x8x4x4xf32>, tensor<4x8x4x4xf32>)");
  EXPECT_THAT(v, ElementsAreArray({
                     "top2_gating.replicate: (id, id) -> (id, id)",
                     "top2_gating.split-groups: (gather(0), id) -> "
                     "(gather(0), gather(0))",
                 }));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_F(ShardingRulesTest, ReshapeOfHiddenIntoHeadsAlignsTo64) {
  // [B,S,768] -> [B,S,12,64]: the group {768} -> {12, 64} has minor output
  // product 64 and minor input product 1, so a shard of s hidden units is
  // s/64 heads: s must be a multiple of 64.
  auto v = variantsOf("%x: tensor<4x128x768xf32>",
                      "%y = graph.reshape %x : tensor<4x128x768xf32> -> "
                      "tensor<4x128x12x64xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "reshape.replicate: (id) -> (id)",
                     "reshape.split-group: (gather(0)) -> (gather(0))",
                     "reshape.split-group: (gather(1)) -> (gather(1))",
                     "reshape.split-group: (gather(2, align 64)) -> "
                     "(gather(2))",
                     "reshape.partial: (sum) -> (sum)",
                     "reshape.partial: (max) -> (max)",
                 }));
  // Back again: heads map to hidden in multiples of 64.
  auto back = variantsOf("%x: tensor<4x128x12x64xf32>",
                         "%y = graph.reshape %x : tensor<4x128x12x64xf32> -> "
                         "tensor<4x128x768xf32>");
  EXPECT_EQ(back[3],
            "reshape.split-group: (gather(2)) -> (gather(2, align 64))");
}

TEST_F(ShardingRulesTest, ReshapeSplitsOnlyMajorMostDimsOfAGroup) {
  // [2,16,100] -> [32,100]: {2,16} -> {32}; a batch shard of s rows is 16·s
  // tokens, so the merged dim's shards are multiples of 16. The minor dim 16
  // cannot be split.
  auto merge = variantsOf("%x: tensor<2x16x100xf32>",
                          "%y = graph.reshape %x : tensor<2x16x100xf32> -> "
                          "tensor<32x100xf32>");
  EXPECT_THAT(merge, ElementsAreArray({
                         "reshape.replicate: (id) -> (id)",
                         "reshape.split-group: (gather(0)) -> (gather(0, "
                         "align 16))",
                         "reshape.split-group: (gather(2)) -> (gather(1))",
                         "reshape.partial: (sum) -> (sum)",
                         "reshape.partial: (max) -> (max)",
                     }));
  // [6,4] -> [4,6]: one group; a shard of s rows of 4 is 4s elements, whole
  // rows of 6 only when 4s ≡ 0 mod 6, i.e. s a multiple of 3 (then 2s/3
  // output rows, a multiple of 2).
  auto swap = variantsOf("%x: tensor<6x4xf32>",
                         "%y = graph.reshape %x : tensor<6x4xf32> -> "
                         "tensor<4x6xf32>");
  EXPECT_EQ(swap[1], "reshape.split-group: (gather(0, align 3)) -> "
                     "(gather(0, align 2))");
  // [3,4] -> [2,6]: s rows of 4 must be a multiple of 3 rows: the whole
  // tensor, so there is no split at all.
  auto none = variantsOf("%x: tensor<3x4xf32>",
                         "%y = graph.reshape %x : tensor<3x4xf32> -> "
                         "tensor<2x6xf32>");
  EXPECT_THAT(
      none, ::testing::Not(::testing::Contains(::testing::HasSubstr("split"))));
  // Size-1 dims are skipped: [32,1,768] -> [32,768].
  auto squeeze = variantsOf("%x: tensor<32x1x768xf32>",
                            "%y = graph.reshape %x : tensor<32x1x768xf32> -> "
                            "tensor<32x768xf32>");
  EXPECT_EQ(squeeze[2], "reshape.split-group: (gather(2)) -> (gather(1))");
}

TEST_F(ShardingRulesTest, FlattenIsAReshape) {
  auto v = variantsOf("%x: tensor<8x512x1x1xf32>",
                      "%y = graph.flatten %x {axis = 1 : i64} : "
                      "tensor<8x512x1x1xf32> -> tensor<8x512xf32>");
  EXPECT_EQ(v[1], "flatten.split-group: (gather(0)) -> (gather(0))");
  EXPECT_EQ(v[2], "flatten.split-group: (gather(1)) -> (gather(1))");
}

TEST_F(ShardingRulesTest, TransposePermutesTheSplitDim) {
  auto v = variantsOf("%x: tensor<2x3x4xf32>",
                      "%y = graph.transpose %x {perm = array<i64: 2, 0, 1>} "
                      ": tensor<2x3x4xf32> -> tensor<4x2x3xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "transpose.replicate: (id) -> (id)",
                     "transpose.split: (gather(2)) -> (gather(0))",
                     "transpose.split: (gather(0)) -> (gather(1))",
                     "transpose.split: (gather(1)) -> (gather(2))",
                     "transpose.partial: (sum) -> (sum)",
                     "transpose.partial: (max) -> (max)",
                 }));
}

TEST_F(ShardingRulesTest, ConcatAndSplitKeepTheirAxisWhole) {
  auto cat = variantsOf(
      "%a: tensor<4x1x8xf32>, %b: tensor<4x6x8xf32>",
      "%y = graph.concat %a, %b {axis = 1 : i64} : (tensor<4x1x8xf32>, "
      "tensor<4x6x8xf32>) -> tensor<4x7x8xf32>");
  EXPECT_THAT(cat, ElementsAreArray({
                       "concat.replicate: (id, id) -> (id)",
                       "concat.split: (gather(0), gather(0)) -> (gather(0))",
                       "concat.split: (gather(2), gather(2)) -> (gather(2))",
                       "concat.partial: (sum, sum) -> (sum)",
                       "concat.partial: (max, max) -> (max)",
                   }));
  auto split = variantsOf(
      "%x: tensor<4x6xf32>",
      "%a, %b = graph.split %x {axis = 1 : i64} : (tensor<4x6xf32>) -> "
      "(tensor<4x2xf32>, tensor<4x4xf32>)");
  EXPECT_EQ(split[1], "split.split: (gather(0)) -> (gather(0), gather(0))");
  EXPECT_EQ(split.size(), 4u);
}

TEST_F(ShardingRulesTest, SliceOfASlicedDimNeedsTheOffset) {
  // The packed-QKV slice: dims 0 and 1 whole, dim 2 the window [32, 64).
  auto v =
      variantsOf("%x: tensor<16x2x96xf32>",
                 "%y = graph.slice %x {starts = array<i64: 0, 0, 32>, limits = "
                 "array<i64: 16, 2, 64>, steps = array<i64: 1, 1, 1>} : "
                 "tensor<16x2x96xf32> -> tensor<16x2x32xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "slice.replicate: (id) -> (id)",
                     "slice.split: (gather(0)) -> (gather(0))",
                     "slice.split: (gather(1)) -> (gather(1))",
                     "slice.split-sliced: (id) -> (gather(2)) offset",
                     "slice.partial: (sum) -> (sum)",
                     "slice.partial: (max) -> (max)",
                 }));
}

TEST_F(ShardingRulesTest, EmbeddingSplitsIndicesOrVocabulary) {
  auto v = variantsOf(
      "%t: tensor<1000x64xf32>, %ids: tensor<4x16xi64>",
      "%e = graph.gather %t, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, "
      "tensor<4x16xi64>) -> tensor<4x16x64xf32>");
  EXPECT_THAT(v, ElementsAreArray({
                     "gather.replicate: (id, id) -> (id)",
                     "gather.split-indices: (id, gather(0)) -> (gather(0))",
                     "gather.split-indices: (id, gather(1)) -> (gather(1))",
                     // Hidden dim 1 of the table is result dim 2.
                     "gather.split-data: (gather(1), id) -> (gather(2))",
                     // Offset and mask: rows outside the shard give zeros.
                     "gather.split-vocab: (gather(0), id) -> (sum) offset",
                     "gather.partial: (sum, id) -> (sum)",
                     "gather.partial: (max, id) -> (max)",
                 }));
}

TEST_F(ShardingRulesTest, ExpandSplitsBroadcastDimsFromAWholeInput) {
  auto v = variantsOf("%x: tensor<1x8x16xf32>",
                      "%y = graph.expand %x : tensor<1x8x16xf32> -> "
                      "tensor<4x8x16xf32>");
  EXPECT_EQ(v[1], "expand.split: (id) -> (gather(0))");
  EXPECT_EQ(v[2], "expand.split: (gather(1)) -> (gather(1))");
}

} // namespace
