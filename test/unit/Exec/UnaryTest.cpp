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

class UnaryGradTest : public ::testing::TestWithParam<UnaryKind> {};

TEST_P(UnaryGradTest, MatchesFiniteDifferences) {
  UnaryKind kind = GetParam();
  Tensor x = randomTensor({3, 5}, 3);
  bool positive = kind == UnaryKind::Sqrt || kind == UnaryKind::Rsqrt ||
                  kind == UnaryKind::Log;
  for (int64_t i = 0; i < x.getNumElements(); ++i) {
    float &v = x.floats()[i];
    if (positive)
      v = 0.5f + std::fabs(v);
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
  const char *names[] = {"Sqrt", "Rsqrt",   "Neg", "Relu", "Gelu",
                         "Tanh", "Sigmoid", "Erf", "Exp",  "Log"};
  return names[int(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Kinds, UnaryGradTest,
                         ::testing::Values(UnaryKind::Sqrt, UnaryKind::Rsqrt,
                                           UnaryKind::Neg, UnaryKind::Relu,
                                           UnaryKind::Gelu, UnaryKind::Tanh,
                                           UnaryKind::Sigmoid, UnaryKind::Erf,
                                           UnaryKind::Exp, UnaryKind::Log),
                         UnaryKindName);

TEST(UnaryTest, ClipClampsAndStopsGradientOutside) {
  Tensor x = Tensor::fromFloats({4}, {-1, 0.5f, 3, 7});
  expectTensor(clip(x, 0.0, 6.0), {4}, {0, 0.5f, 3, 6});
  expectTensor(clip(x, std::nullopt, 1.0), {4}, {-1, 0.5f, 1, 1});
  Tensor dy = Tensor::fromFloats({4}, {1, 2, 3, 4});
  expectTensor(clipBackward(x, 0.0, 6.0, dy), {4}, {0, 2, 3, 0});
}
