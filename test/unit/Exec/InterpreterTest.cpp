//===- InterpreterTest.cpp - Graph programs forward and backward ----------===//

#include "weft/Exec/Interpreter.h"
#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "weft/Exec/GradientCheck.h"
#include "weft/Exec/Inputs.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace weft::exec;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<weft::graph::GraphDialect, mlir::func::FuncDialect>();
  }

  mlir::func::FuncOp parse(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    auto main = findMain(*module);
    EXPECT_TRUE(bool(main));
    if (!main) {
      llvm::consumeError(main.takeError());
      return {};
    }
    return *main;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

const char *kLinear = R"mlir(
func.func @main(%x: tensor<2x3xf32> {graph.input = "x"},
                %y: tensor<2xi64> {graph.input = "y"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<3x4xf32>
  %h = graph.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %l = graph.cross_entropy %h, %y {reduction = "mean"} : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

// A richer program: embedding, layer norm, GELU, dropout, attention-like
// softmax, a reduce and a residual; every parameter feeds the loss.
const char *kBlock = R"mlir(
func.func @main(%ids: tensor<2x3xi64> {graph.input = "ids"},
                %y: tensor<6xi64> {graph.input = "labels"}) -> tensor<f32> {
  %e = graph.parameter "embed" : tensor<7x4xf32>
  %g = graph.parameter "ln.weight" : tensor<4xf32>
  %b = graph.parameter "ln.bias" : tensor<4xf32>
  %w = graph.parameter "proj" : tensor<4x5xf32>
  %c = graph.constant dense<2.0> : tensor<f32> : tensor<f32>
  %x = graph.gather %e, %ids {axis = 0 : i64} : (tensor<7x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %n = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %a = graph.gelu %n : tensor<2x3x4xf32>
  %d = graph.dropout %a {ratio = 0.25 : f64} : tensor<2x3x4xf32>
  %t = graph.transpose %d {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %s = graph.matmul %d, %t : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
  %s2 = graph.div %s, %c : (tensor<2x3x3xf32>, tensor<f32>) -> tensor<2x3x3xf32>
  %p = graph.softmax %s2 {axis = 2 : i64} : tensor<2x3x3xf32>
  %v = graph.matmul %p, %n : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = graph.add %v, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %o = graph.matmul %r, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %f = graph.reshape %o : tensor<2x3x5xf32> -> tensor<6x5xf32>
  %l = graph.cross_entropy %f, %y {reduction = "mean"} : (tensor<6x5xf32>, tensor<6xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

} // namespace

// w = 0: logits 0, loss ln 4. dlogits = (softmax − onehot) / 2, and
// dW = xᵀ·dlogits with x = [[1, 0, 0], [0, 2, 0]], labels [0, 3].
TEST_F(InterpreterTest, HandComputedLossAndGradient) {
  mlir::func::FuncOp main = parse(kLinear);
  ASSERT_TRUE(main);
  Bindings b;
  b.inputs["x"] = Tensor::fromFloats({2, 3}, {1, 0, 0, 0, 2, 0});
  b.inputs["y"] = Tensor::fromInts({2}, {0, 3});
  b.parameters["w"] = Tensor::zeros({3, 4});
  GraphInterpreter interp(main);
  ASSERT_FALSE(bool(interp.forward(b)));
  EXPECT_NEAR(interp.getLoss(), std::log(4.0), 1e-7);
  ASSERT_FALSE(bool(interp.backward()));
  const Tensor &dw = interp.getParameterGradients().find("w")->second;
  float expected[] = {-0.375f, 0.125f, 0.125f, 0.125f, 0.25f, 0.25f,
                      0.25f,   -0.75f, 0,      0,      0,     0};
  for (int i = 0; i < 12; ++i)
    EXPECT_NEAR(dw.floats()[i], expected[i], 1e-6) << i;
}

TEST_F(InterpreterTest, ReportsMissingAndMisshapenBindings) {
  mlir::func::FuncOp main = parse(kLinear);
  ASSERT_TRUE(main);
  Bindings b;
  b.inputs["x"] = Tensor::zeros({2, 3});
  b.inputs["y"] = Tensor::fromInts({2}, {0, 1});
  GraphInterpreter interp(main);
  EXPECT_EQ(llvm::toString(interp.forward(b)),
            "no value bound to parameter 'w'");
  b.parameters["w"] = Tensor::zeros({4, 3});
  EXPECT_EQ(llvm::toString(interp.forward(b)),
            "parameter 'w' has shape [4, 3], the model expects [3, 4]");
  b.parameters["w"] = Tensor::zeros({3, 4});
  b.inputs["y"] = Tensor::fromInts({2}, {0, 4});
  EXPECT_EQ(llvm::toString(interp.forward(b)),
            "graph.cross_entropy: label 4 at element 1 is out of range [0, 4)");
}

TEST_F(InterpreterTest, GradientsOfABlockAgreeWithFiniteDifferences) {
  mlir::func::FuncOp main = parse(kBlock);
  ASSERT_TRUE(main);
  InitOptions init;
  init.seed = 3;
  auto b = makeBindings(main, init);
  ASSERT_TRUE(bool(b));
  // Larger weights than the default init so every path carries gradient.
  for (auto &entry : b->parameters)
    for (int64_t i = 0; i < entry.second.getNumElements(); ++i)
      entry.second.floats()[i] += 0.5f * float((i % 5) - 2) / 2;
  GraphInterpreter interp(main, /*seed=*/11);
  ASSERT_FALSE(bool(interp.forward(*b)));
  ASSERT_FALSE(bool(interp.backward()));
  GradientCheckOptions check;
  check.elementsPerParameter = 1000; // every element
  auto result = checkGradients(interp, *b, check);
  ASSERT_TRUE(bool(result));
  EXPECT_FALSE(result->mismatch.has_value())
      << result->mismatch->parameter << result->mismatch->coordinates << " "
      << result->mismatch->analytic << " vs " << result->mismatch->numeric;
  EXPECT_EQ(result->parameters, 4u);
  EXPECT_GT(result->checked, 50u);
}

// Gradients taken at one point and checked at another must fail: the check
// can tell a wrong gradient.
TEST_F(InterpreterTest, GradientCheckCatchesStaleGradients) {
  mlir::func::FuncOp main = parse(kBlock);
  ASSERT_TRUE(main);
  auto b = makeBindings(main, {});
  ASSERT_TRUE(bool(b));
  GraphInterpreter interp(main);
  ASSERT_FALSE(bool(interp.forward(*b)));
  ASSERT_FALSE(bool(interp.backward()));
  Tensor &proj = b->parameters["proj"];
  for (int64_t i = 0; i < proj.getNumElements(); ++i)
    proj.floats()[i] = proj.floats()[i] * 50 + 1;
  auto result = checkGradients(interp, *b, {});
  ASSERT_TRUE(bool(result));
  ASSERT_TRUE(result->mismatch.has_value());
}

TEST_F(InterpreterTest, IndexBoundsFollowReshapesToTablesAndLosses) {
  mlir::func::FuncOp main = parse(kBlock);
  ASSERT_TRUE(main);
  EXPECT_EQ(indexBound(main.getArgument(0)), 7); // rows of "embed"
  EXPECT_EQ(indexBound(main.getArgument(1)), 5); // classes of the loss
}

TEST_F(InterpreterTest, BindingsFollowRolesAndSeeds) {
  mlir::func::FuncOp main = parse(kBlock);
  ASSERT_TRUE(main);
  BindingSummary summary;
  auto b = makeBindings(main, {}, &summary);
  ASSERT_TRUE(bool(b));
  EXPECT_EQ(summary.parametersRandom, 4u);
  EXPECT_EQ(summary.inputsRandom, 2u);
  for (float v : b->parameters["ln.weight"].floatValues())
    EXPECT_EQ(v, 1.0f);
  for (float v : b->parameters["ln.bias"].floatValues())
    EXPECT_EQ(v, 0.0f);
  double sq = 0;
  for (float v : b->parameters["embed"].floatValues())
    sq += v * v;
  double std = std::sqrt(sq / 28);
  EXPECT_GT(std, 0.01);
  EXPECT_LT(std, 0.04);
  for (int64_t id : b->inputs["ids"].intValues()) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 7);
  }
  auto again = makeBindings(main, {});
  EXPECT_EQ(again->parameters["embed"].floatValues(),
            b->parameters["embed"].floatValues());
  InitOptions other;
  other.seed = 1;
  auto different = makeBindings(main, other);
  EXPECT_NE(different->parameters["embed"].floatValues(),
            b->parameters["embed"].floatValues());
}

TEST_F(InterpreterTest, ParameterValuesFromWeights) {
  mlir::func::FuncOp main = parse(R"mlir(
func.func @main(%x: tensor<1x2xf32> {graph.input = "x"}, %y: tensor<1xi64> {graph.input = "y"}) -> tensor<f32> {
  %w = graph.parameter "w" {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %h = graph.matmul %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %l = graph.nll_loss %h, %y {reduction = "sum"} : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir");
  ASSERT_TRUE(main);
  BindingSummary summary;
  auto b = makeBindings(main, {}, &summary);
  ASSERT_TRUE(bool(b));
  EXPECT_EQ(summary.parametersFromWeights, 1u);
  b->inputs["x"] = Tensor::fromFloats({1, 2}, {1, 1});
  b->inputs["y"] = Tensor::fromInts({1}, {1});
  GraphInterpreter interp(main);
  ASSERT_FALSE(bool(interp.forward(*b)));
  EXPECT_EQ(interp.getLoss(), -6.0); // −(2 + 4)
}

// bf16 results are rounded after every op: 1 + 2⁻⁸ is a tie that rounds to
// 1 and 2 + 2⁻⁸ rounds to 2, so the sum is 3 (in f32 it would be 3.0078125).
TEST_F(InterpreterTest, BF16ResultsAreRounded) {
  mlir::func::FuncOp main = parse(R"mlir(
func.func @main() -> tensor<f32> {
  %a = graph.parameter "a" {value = dense<[1.0, 2.0]> : tensor<2xbf16>} : tensor<2xbf16>
  %c = graph.constant dense<0.00390625> : tensor<bf16> : tensor<bf16>
  %s = graph.add %a, %c : (tensor<2xbf16>, tensor<bf16>) -> tensor<2xbf16>
  %f = graph.cast %s : tensor<2xbf16> -> tensor<2xf32>
  %r = graph.reduce_sum %f {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %r : tensor<f32>
}
)mlir");
  ASSERT_TRUE(main);
  auto b = makeBindings(main, {});
  ASSERT_TRUE(bool(b));
  GraphInterpreter interp(main);
  ASSERT_FALSE(bool(interp.forward(*b)));
  EXPECT_EQ(interp.getLoss(), 3.0);
  ASSERT_FALSE(bool(interp.backward()));
  const Tensor &da = interp.getParameterGradients().find("a")->second;
  EXPECT_EQ(da.floats()[0], 1.0f);
}
