//===- SoftmaxTest.cpp - Softmax and log-softmax --------------------------===//

#include "weft/Exec/Softmax.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(SoftmaxTest, HandComputed) {
  // exp(0) : exp(ln 2) = 1 : 2.
  Tensor x = Tensor::fromFloats({1, 2}, {0, float(std::log(2.0))});
  expectTensor(softmax(x, 1), {1, 2}, {1.0f / 3, 2.0f / 3});
  expectTensor(logSoftmax(x, 1), {1, 2},
               {float(-std::log(3.0)), float(std::log(2.0 / 3))});
}

TEST(SoftmaxTest, StableForLargeLogitsAndNonLastAxis) {
  // Axis 0 of a 2×2: columns are normalised.
  Tensor x = Tensor::fromFloats({2, 2}, {1000, 0, 1000, 0});
  expectTensor(softmax(x, 0), {2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(SoftmaxTest, GradientsMatchFiniteDifferences) {
  Tensor x = randomTensor({2, 3, 4}, 41);
  for (int64_t axis : {0, 1, 2}) {
    expectGradientsMatch(
        [axis](const std::vector<Tensor> &in) { return softmax(in[0], axis); },
        [axis](const std::vector<Tensor> &, const Tensor &y, const Tensor &dy) {
          return std::vector<Tensor>{softmaxBackward(y, dy, axis)};
        },
        {x});
    expectGradientsMatch(
        [axis](const std::vector<Tensor> &in) {
          return logSoftmax(in[0], axis);
        },
        [axis](const std::vector<Tensor> &, const Tensor &y, const Tensor &dy) {
          return std::vector<Tensor>{logSoftmaxBackward(y, dy, axis)};
        },
        {x});
  }
}
