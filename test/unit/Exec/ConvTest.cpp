//===- ConvTest.cpp - 2-D convolution -------------------------------------===//

#include "weft/Exec/Conv.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

// 3×3 image 1..9, 2×2 kernel [[1, 0], [0, 1]]: each output is the sum of a
// window's top-left and bottom-right: 1+5, 2+6, 4+8, 5+9.
TEST(ConvTest, HandComputedValidConvolution) {
  Tensor x = Tensor::fromFloats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::fromFloats({1, 1, 2, 2}, {1, 0, 0, 1});
  Tensor b = Tensor::fromFloats({1}, {0.5f});
  expectTensor(conv2d(x, w, &b, {}), {1, 1, 2, 2}, {6.5f, 8.5f, 12.5f, 14.5f});
}

// Padding 1 and stride 2 on the same image with a 3×3 all-ones kernel: the
// windows centred on the corners sum 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9.
TEST(ConvTest, PaddingAndStride) {
  Tensor x = Tensor::fromFloats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::filled({1, 1, 3, 3}, 1.0f);
  Conv2dParams p;
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  expectTensor(conv2d(x, w, nullptr, p), {1, 1, 2, 2}, {12, 16, 24, 28});
}

// Two groups: channel 0 scaled by 2 into output 0, channel 1 by 3 into 1.
TEST(ConvTest, GroupsKeepChannelsApart) {
  Tensor x = Tensor::fromFloats({1, 2, 1, 2}, {1, 2, 10, 20});
  Tensor w = Tensor::fromFloats({2, 1, 1, 1}, {2, 3});
  Conv2dParams p;
  p.group = 2;
  expectTensor(conv2d(x, w, nullptr, p), {1, 2, 1, 2}, {2, 4, 30, 60});
}

static void checkConvGrads(Conv2dParams p, llvm::ArrayRef<int64_t> x,
                           llvm::ArrayRef<int64_t> w) {
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) {
        return conv2d(in[0], in[1], &in[2], p);
      },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        Conv2dGrads g = conv2dBackward(in[0], in[1], true, dy, p);
        return std::vector<Tensor>{g.input, g.weight, g.bias};
      },
      {randomTensor(x, 21), randomTensor(w, 22), randomTensor({w[0]}, 23)});
}

TEST(ConvTest, GradientsPadded) {
  Conv2dParams p;
  p.pads = {1, 1, 1, 1};
  checkConvGrads(p, {2, 3, 5, 5}, {4, 3, 3, 3});
}

TEST(ConvTest, GradientsStridedDilatedGrouped) {
  Conv2dParams p;
  p.strides = {2, 1};
  p.dilations = {1, 2};
  p.pads = {0, 1, 1, 0};
  p.group = 2;
  checkConvGrads(p, {1, 4, 6, 6}, {2, 2, 2, 3});
}
