//===- ConvTransposeTest.cpp - 2-D transposed convolution -----------------===//

#include "weft/Exec/ConvTranspose.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

// A 2×2 image 1..4 and a 2×2 kernel of ones, stride 1: every input element
// adds itself into the 2×2 window at its position of the 3×3 result.
TEST(ConvTransposeTest, OverlappingWindowsAdd) {
  Tensor x = Tensor::fromFloats({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::filled({1, 1, 2, 2}, 1.0f);
  expectTensor(convTranspose2d(x, w, nullptr, {}, {1, 1, 3, 3}), {1, 1, 3, 3},
               {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

// Stride 2 with a 2×2 kernel: the windows tile the result, each holding
// its input element times the kernel; output padding 1 adds a last row and
// column that only the bias reaches.
TEST(ConvTransposeTest, StrideTilesAndOutputPaddingHoldsTheBias) {
  Tensor x = Tensor::fromFloats({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::fromFloats({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::fromFloats({1}, {0.5f});
  ConvTranspose2dParams p;
  p.strides = {2, 2};
  expectTensor(convTranspose2d(x, w, &b, p, {1, 1, 5, 5}), {1, 1, 5, 5},
               {1.5, 2.5,  2.5,  4.5,  0.5, //
                3.5, 4.5,  6.5,  8.5,  0.5, //
                3.5, 6.5,  4.5,  8.5,  0.5, //
                9.5, 12.5, 12.5, 16.5, 0.5, //
                0.5, 0.5,  0.5,  0.5,  0.5});
}

// Weights are C×(O/g)×KH×KW: two groups, input channel 0 into outputs 0
// and 1, channel 1 into outputs 2 and 3.
TEST(ConvTransposeTest, GroupsKeepChannelsApart) {
  Tensor x = Tensor::fromFloats({1, 2, 1, 1}, {1, 10});
  Tensor w = Tensor::fromFloats({2, 2, 1, 1}, {2, 3, 4, 5});
  ConvTranspose2dParams p;
  p.group = 2;
  expectTensor(convTranspose2d(x, w, nullptr, p, {1, 4, 1, 1}), {1, 4, 1, 1},
               {2, 3, 40, 50});
}

static double dot(const Tensor &a, const Tensor &b) {
  double s = 0;
  for (int64_t i = 0; i < a.getNumElements(); ++i)
    s += double(a.floats()[i]) * b.floats()[i];
  return s;
}

// The transposed convolution is the adjoint of conv2d with the same
// weight and window: <convT(x), y> = <x, conv2d(y)>.
TEST(ConvTransposeTest, AdjointOfConv2d) {
  ConvTranspose2dParams p;
  p.strides = {2, 3};
  p.pads = {1, 0, 2, 1};
  p.dilations = {2, 1};
  p.group = 2;
  Tensor x = randomTensor({2, 4, 3, 4}, 31), w = randomTensor({4, 3, 3, 2}, 32);
  // (3 − 1)·2 + 2·2 + 1 − 3 = 6 rows; (4 − 1)·3 + 1·1 + 1 − 1 = 10 columns.
  Tensor y = convTranspose2d(x, w, nullptr, p, {2, 6, 6, 10});
  Tensor r = randomTensor(y.getShape(), 33);
  Tensor c = conv2d(r, w, nullptr, p);
  ASSERT_EQ(c.getShape(), x.getShape());
  EXPECT_NEAR(dot(y, r), dot(x, c), 1e-3 * std::max(1.0, std::fabs(dot(y, r))));
}

static void checkGrads(ConvTranspose2dParams p, llvm::ArrayRef<int64_t> x,
                       llvm::ArrayRef<int64_t> w, Shape result) {
  expectGradientsMatch(
      [p, result](const std::vector<Tensor> &in) {
        return convTranspose2d(in[0], in[1], &in[2], p, result);
      },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        Conv2dGrads g = convTranspose2dBackward(in[0], in[1], true, dy, p);
        return std::vector<Tensor>{g.input, g.weight, g.bias};
      },
      {randomTensor(x, 41), randomTensor(w, 42),
       randomTensor({result[1]}, 43)});
}

TEST(ConvTransposeTest, GradientsPadded) {
  ConvTranspose2dParams p;
  p.pads = {1, 1, 1, 1};
  checkGrads(p, {2, 3, 4, 4}, {3, 2, 3, 3}, {2, 2, 4, 4});
}

TEST(ConvTransposeTest, GradientsStridedDilatedGroupedOutputPadding) {
  ConvTranspose2dParams p;
  p.strides = {2, 3};
  p.dilations = {1, 2};
  p.pads = {0, 1, 1, 0};
  p.group = 2;
  // Rows (3 − 1)·2 + 2 − 1 = 5, plus an output padding of 1; columns
  // (3 − 1)·3 + 2·1 + 1 − 1 = 8, plus 2 (output padding ≥ stride is
  // allowed when smaller than the dilation's reach).
  checkGrads(p, {1, 4, 3, 3}, {4, 1, 2, 2}, {1, 2, 6, 10});
}
