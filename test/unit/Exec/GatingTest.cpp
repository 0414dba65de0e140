//===- GatingTest.cpp - GShard top-2 gating -------------------------------===//

#include "weft/Exec/Gating.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

namespace {

/// With an identity gate the tokens are the logits.
Tensor identityGate(int64_t n) {
  Tensor w(ElementType::F32, {n, n});
  for (int64_t i = 0; i < n; ++i)
    w.floats()[i * n + i] = 1.0f;
  return w;
}

float at(const Tensor &t, int64_t s, int64_t e, int64_t c) {
  return t.floats()[(s * t.getDim(2) + e) * t.getDim(3) + c];
}

} // namespace

// Three tokens preferring experts 0, 1, 0 with probabilities 3/4 : 1/4 and
// capacity 2. First choices: t0 → e0 slot 0, t1 → e1 slot 0, t2 → e0
// slot 1. Second choices: t0 → e1 slot 1; t1 → e0 and t2 → e1 find their
// expert full and are dropped.
TEST(GatingTest, SlotsInTokenOrderFirstChoicesFirst) {
  float ln3 = float(std::log(3.0));
  Tensor tokens = Tensor::fromFloats({1, 3, 2}, {ln3, 0, 0, ln3, ln3, 0});
  GatingResult r = top2Gating(tokens, identityGate(2), 2);
  ASSERT_EQ(r.dispatch.getShape(), llvm::ArrayRef<int64_t>({1, 3, 2, 2}));
  float total = 0;
  for (float v : r.dispatch.floatValues())
    total += v;
  EXPECT_EQ(total, 4.0f);
  EXPECT_EQ(at(r.dispatch, 0, 0, 0), 1.0f);
  EXPECT_EQ(at(r.dispatch, 1, 1, 0), 1.0f);
  EXPECT_EQ(at(r.dispatch, 2, 0, 1), 1.0f);
  EXPECT_EQ(at(r.dispatch, 0, 1, 1), 1.0f);
  EXPECT_NEAR(at(r.combine, 0, 0, 0), 0.75f, 1e-6);
  EXPECT_NEAR(at(r.combine, 0, 1, 1), 0.25f, 1e-6);
  EXPECT_NEAR(at(r.combine, 1, 1, 0), 0.75f, 1e-6);
  EXPECT_NEAR(at(r.combine, 2, 0, 1), 0.75f, 1e-6);
}

// p ∝ [4, 2, 1]: experts 0 and 1 with gates 4/6 and 2/6 (normalised over
// the two chosen, not over all three).
TEST(GatingTest, GatesNormalisedOverTheTwoChosen) {
  Tensor tokens = Tensor::fromFloats(
      {1, 1, 3}, {float(std::log(4.0)), float(std::log(2.0)), 0});
  GatingResult r = top2Gating(tokens, identityGate(3), 1);
  EXPECT_NEAR(at(r.combine, 0, 0, 0), 2.0f / 3, 1e-6);
  EXPECT_NEAR(at(r.combine, 0, 1, 0), 1.0f / 3, 1e-6);
  EXPECT_EQ(at(r.dispatch, 0, 2, 0), 0.0f);
}

TEST(GatingTest, CombineGradientsMatchFiniteDifferences) {
  expectGradientsMatch(
      [](const std::vector<Tensor> &in) {
        return top2Gating(in[0], in[1], 2).combine;
      },
      [](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        BinaryGrads g = top2GatingBackward(in[0], in[1], dy, 2);
        return std::vector<Tensor>{g.lhs, g.rhs};
      },
      {randomTensor({2, 4, 3}, 101), randomTensor({3, 3}, 102)},
      {/*step=*/1e-3, /*rtol=*/1e-2, /*atol=*/2e-3});
}
