//===- UnaryTest.cpp - Elementwise unary kernels and clip -----------------===//

#include "weft/Exec/Unary.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

// Reference values from the definitions (erf(1/√2) = 0.6826895, so
// gelu(1) = 0.5·(1 + 0.6826895) = 0.8413447).
TEST(UnaryTest, HandComputedValues) {
  Tensor x = Tensor::fromFloats({3}, {-1, 0, 1});
  expectTensor(unary(UnaryKind::Gelu, x), {3}, {-0.1586553f, 0.0f, 0.8413447f});
  expectTensor(unary(UnaryKind::Erf, x), {3}, {-0.8427008f, 0, 0.8427008f});
  expectTensor(unary(UnaryKind::Sigmoid, x), {3},
               {0.2689414f, 0.5f, 0.7310586f});
  expectTensor(unary(UnaryKind::Relu, x), {3}, {0, 0, 1});
  expectTensor(unary(UnaryKind::Tanh, x), {3}, {-0.7615942f, 0, 0.7615942f});
  expectTensor(unary(UnaryKind::Neg, x), {3}, {1, 0, -1});
  Tensor p = Tensor::fromFloats({2}, {4, 0.25f});
  expectTensor(unary(UnaryKind::Sqrt, p), {2}, {2, 0.5f});
  expectTensor(unary(UnaryKind::Rsqrt, p), {2}, {0.5f, 2});
  expectTensor(unary(UnaryKind::Log, p), {2}, {1.3862944f, -1.3862944f});
  expectTensor(unary(UnaryKind::Exp, x), {3}, {0.3678794f, 1, 2.7182818f});
}

// Values from NumPy (np.sin(0.5) = 0.47942554, ...).
TEST(UnaryTest, TrigonometricAndHyperbolicValues) {
  Tensor x = Tensor::fromFloats({2}, {-0.5f, 0.5f});
  expectTensor(unary(UnaryKind::Sin, x), {2}, {-0.4794255f, 0.4794255f});
  expectTensor(unary(UnaryKind::Cos, x), {2}, {0.8775826f, 0.8775826f});
  expectTensor(unary(UnaryKind::Tan, x), {2}, {-0.5463025f, 0.5463025f});
  expectTensor(unary(UnaryKind::Asin, x), {2}, {-0.5235988f, 0.5235988f});
  expectTensor(unary(UnaryKind::Acos, x), {2}, {2.0943951f, 1.0471976f});
  expectTensor(unary(UnaryKind::Atan, x), {2}, {-0.4636476f, 0.4636476f});
  expectTensor(unary(UnaryKind::Sinh, x), {2}, {-0.5210953f, 0.5210953f});
  expectTensor(unary(UnaryKind::Cosh, x), {2}, {1.1276260f, 1.1276260f});
  expectTensor(unary(UnaryKind::Asinh, x), {2}, {-0.4812118f, 0.4812118f});
  expectTensor(unary(UnaryKind::Atanh, x), {2}, {-0.5493061f, 0.5493061f});
  Tensor big = Tensor::fromFloats({2}, {1, 2});
  expectTensor(unary(UnaryKind::Acosh, big), {2}, {0, 1.3169579f});
  // Outside the domain: NaN, as NumPy and onnxruntime.
  Tensor out = unary(UnaryKind::Asin, Tensor::fromFloats({1}, {2}));
  EXPECT_TRUE(std::isnan(out.floats()[0]));
}

// Round takes halves to even (NumPy's rint, ONNX's Round); the three are
// piecewise constant: the backward passes nothing.
TEST(UnaryTest, RoundingsAndTheirZeroGradient) {
  Tensor x =
      Tensor::fromFloats({7}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 1.7f});
  expectTensor(unary(UnaryKind::Round, x), {7}, {-2, -2, -0, 0, 2, 2, 2});
  expectTensor(unary(UnaryKind::Floor, x), {7}, {-3, -2, -1, 0, 1, 2, 1});
  expectTensor(unary(UnaryKind::Ceil, x), {7}, {-2, -1, -0, 1, 2, 3, 2});
  Tensor dy = Tensor::fromFloats({7}, {1, 2, 3, 4, 5, 6, 7});
  for (UnaryKind kind : {UnaryKind::Floor, UnaryKind::Ceil, UnaryKind::Round})
    expectTensor(unaryBackward(kind, x, unary(kind, x), dy), {7},
                 {0, 0, 0, 0, 0, 0, 0});
}

class UnaryGradTest : public ::testing::TestWithParam<UnaryKind> {};

TEST_P(UnaryGradTest, MatchesFiniteDifferences) {
  UnaryKind kind = GetParam();
  Tensor x = randomTensor({3, 5}, 3);
  bool positive = kind == UnaryKind::Sqrt || kind == UnaryKind::Rsqrt ||
                  kind == UnaryKind::Log;
  // Inside (−1, 1) for the inverse sine, cosine and hyperbolic tangent,
  // above 1 for the inverse hyperbolic cosine, within (−π/2, π/2) for tan.
  bool unit = kind == UnaryKind::Asin || kind == UnaryKind::Acos ||
              kind == UnaryKind::Atanh || kind == UnaryKind::Tan;
  for (int64_t i = 0; i < x.getNumElements(); ++i) {
    float &v = x.floats()[i];
    if (positive)
      v = 0.5f + std::fabs(v);
    else if (unit)
      v = 0.8f * std::tanh(v);
    else if (kind == UnaryKind::Acosh)
      v = 1.5f + std::fabs(v);
    else if (kind == UnaryKind::Relu && std::fabs(v) < 0.05f)
      v = 0.1f; // keep finite differences off the kink
  }
  expectGradientsMatch(
      [&](const std::vector<Tensor> &in) { return unary(kind, in[0]); },
      [&](const std::vector<Tensor> &in, const Tensor &y, const Tensor &dy) {
        return std::vector<Tensor>{unaryBackward(kind, in[0], y, dy)};
      },
      {x});
}

static std::string
UnaryKindName(const ::testing::TestParamInfo<UnaryKind> &info) {
  const char *names[] = {"Sqrt",    "Rsqrt", "Neg",   "Relu",  "Gelu", "Tanh",
                         "Sigmoid", "Erf",   "Exp",   "Log",   "Sin",  "Cos",
                         "Tan",     "Asin",  "Acos",  "Atan",  "Sinh", "Cosh",
                         "Asinh",   "Acosh", "Atanh", "Floor", "Ceil", "Round"};
  return names[int(info.param)];
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, UnaryGradTest,
    ::testing::Values(UnaryKind::Sqrt, UnaryKind::Rsqrt, UnaryKind::Neg,
                      UnaryKind::Relu, UnaryKind::Gelu, UnaryKind::Tanh,
                      UnaryKind::Sigmoid, UnaryKind::Erf, UnaryKind::Exp,
                      UnaryKind::Log, UnaryKind::Sin, UnaryKind::Cos,
                      UnaryKind::Tan, UnaryKind::Asin, UnaryKind::Acos,
                      UnaryKind::Atan, UnaryKind::Sinh, UnaryKind::Cosh,
                      UnaryKind::Asinh, UnaryKind::Acosh, UnaryKind::Atanh),
    UnaryKindName);

TEST(UnaryTest, ClipClampsAndStopsGradientOutside) {
  Tensor x = Tensor::fromFloats({4}, {-1, 0.5f, 3, 7});
  expectTensor(clip(x, 0.0, 6.0), {4}, {0, 0.5f, 3, 6});
  expectTensor(clip(x, std::nullopt, 1.0), {4}, {-1, 0.5f, 1, 1});
  Tensor dy = Tensor::fromFloats({4}, {1, 2, 3, 4});
  expectTensor(clipBackward(x, 0.0, 6.0, dy), {4}, {0, 2, 3, 0});
}
