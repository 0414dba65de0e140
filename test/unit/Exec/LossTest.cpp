//===- LossTest.cpp - Cross-entropy and negative log-likelihood -----------===//

#include "weft/Exec/Loss.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

// Uniform logits over 2 classes: ln 2 per sample. Logits [ln 3, 0] with
// label 0: −ln(3/4) = ln 4 − ln 3.
TEST(LossTest, CrossEntropyHandComputed) {
  Tensor logits = Tensor::fromFloats({2, 2}, {0, 0, float(std::log(3.0)), 0});
  Tensor labels = Tensor::fromInts({2}, {1, 0});
  double ln2 = std::log(2.0), second = std::log(4.0 / 3.0);
  LossParams mean;
  expectTensor(crossEntropy(logits, labels, mean), {},
               {float((ln2 + second) / 2)});
  LossParams sum;
  sum.reduction = LossReduction::Sum;
  expectTensor(crossEntropy(logits, labels, sum), {}, {float(ln2 + second)});
  EXPECT_NEAR(crossEntropyValue(logits, labels, sum), ln2 + second, 1e-7);
}

TEST(LossTest, IgnoredLabelsDoNotCountInTheMean) {
  Tensor logits = Tensor::fromFloats({3, 2}, {0, 0, 5, -5, 0, 0});
  Tensor labels = Tensor::fromInts({3}, {0, -100, 1});
  LossParams p;
  p.ignoreIndex = -100;
  expectTensor(crossEntropy(logits, labels, p), {}, {float(std::log(2.0))});
  Tensor dx = crossEntropyBackward(logits, labels, 1.0f, p);
  expectTensor(dx, {3, 2}, {-0.25f, 0.25f, 0, 0, 0.25f, -0.25f});
}

TEST(LossTest, TrailingDimensionsAsInOnnx) {
  // N=1, C=2, one trailing dim of 2: positions (0,0) and (0,1).
  Tensor logits = Tensor::fromFloats({1, 2, 2}, {0, 1, 0, 1});
  Tensor labels = Tensor::fromInts({1, 2}, {0, 1});
  LossParams sum;
  sum.reduction = LossReduction::Sum;
  expectTensor(crossEntropy(logits, labels, sum), {},
               {float(2 * std::log(2.0))});
}

TEST(LossTest, NllLossPicksTheLabel) {
  Tensor logp = Tensor::fromFloats({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor labels = Tensor::fromInts({2}, {2, 0});
  expectTensor(nllLoss(logp, labels, {}), {}, {3.5f});
  expectTensor(nllLossBackward({2, 3}, labels, 2.0f, {}), {2, 3},
               {0, 0, -1, -1, 0, 0});
  EXPECT_FALSE(parseLossReduction("none"));
}

TEST(LossTest, GradientsMatchFiniteDifferences) {
  Tensor labels = Tensor::fromInts({3, 2}, {0, 4, 2, -1, 1, 3});
  for (LossReduction r : {LossReduction::Mean, LossReduction::Sum}) {
    LossParams p;
    p.reduction = r;
    p.ignoreIndex = -1;
    expectGradientsMatch(
        [&](const std::vector<Tensor> &in) {
          return crossEntropy(in[0], labels, p);
        },
        [&](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
          return std::vector<Tensor>{
              crossEntropyBackward(in[0], labels, dy.floats()[0], p)};
        },
        {randomTensor({3, 5, 2}, 91)});
    expectGradientsMatch(
        [&](const std::vector<Tensor> &in) {
          return nllLoss(in[0], labels, p);
        },
        [&](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
          return std::vector<Tensor>{
              nllLossBackward(in[0].getShape(), labels, dy.floats()[0], p)};
        },
        {randomTensor({3, 5, 2}, 92)});
  }
}
