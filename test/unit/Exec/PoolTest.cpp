//===- PoolTest.cpp - Max, average and global average pooling -------------===//

#include "weft/Exec/Pool.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

static PoolParams twoByTwo() {
  PoolParams p;
  p.kernel = {2, 2};
  p.strides = {2, 2};
  return p;
}

TEST(PoolTest, MaxAndAverageOfWindows) {
  Tensor x = Tensor::fromFloats(
      {1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  expectTensor(maxPool(x, twoByTwo()), {1, 1, 2, 2}, {6, 8, 14, 16});
  expectTensor(avgPool(x, twoByTwo()), {1, 1, 2, 2},
               {3.5f, 5.5f, 11.5f, 13.5f});
}

// Padding counts in the average (count_include_pad = 1) and is −∞ for max.
TEST(PoolTest, PaddingSemantics) {
  Tensor x = Tensor::fromFloats({1, 1, 1, 2}, {-4, -2});
  PoolParams p;
  p.kernel = {1, 2};
  p.strides = {1, 2};
  p.pads = {0, 1, 0, 1};
  expectTensor(maxPool(x, p), {1, 1, 1, 2}, {-4, -2});
  expectTensor(avgPool(x, p), {1, 1, 1, 2}, {-2, -1});
}

TEST(PoolTest, MaxRoutesGradientToTheMaximum) {
  Tensor x = Tensor::fromFloats({1, 1, 2, 2}, {1, 9, 3, 4});
  Tensor dx =
      maxPoolBackward(x, Tensor::fromFloats({1, 1, 1, 1}, {5}), twoByTwo());
  expectTensor(dx, {1, 1, 2, 2}, {0, 5, 0, 0});
}

TEST(PoolTest, GlobalAverage) {
  Tensor x = Tensor::fromFloats({1, 2, 1, 2}, {1, 3, 10, 20});
  expectTensor(globalAvgPool(x), {1, 2, 1, 1}, {2, 15});
  expectTensor(globalAvgPoolBackward({1, 2, 1, 2},
                                     Tensor::fromFloats({1, 2, 1, 1}, {4, 8})),
               {1, 2, 1, 2}, {2, 2, 4, 4});
}

TEST(PoolTest, GradientsMatchFiniteDifferences) {
  PoolParams p;
  p.kernel = {3, 2};
  p.strides = {2, 1};
  p.pads = {1, 0, 1, 1};
  // Distinct values 0.05 apart: no window's maximum changes within the
  // finite-difference step.
  Tensor x(ElementType::F32, {2, 2, 5, 4});
  for (int64_t i = 0; i < 80; ++i)
    x.floats()[i] = float((i * 37) % 80) * 0.05f - 2.0f;
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) { return maxPool(in[0], p); },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{maxPoolBackward(in[0], dy, p)};
      },
      {x});
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) { return avgPool(in[0], p); },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{avgPoolBackward(in[0].getShape(), dy, p)};
      },
      {x});
  expectGradientsMatch(
      [](const std::vector<Tensor> &in) { return globalAvgPool(in[0]); },
      [](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{globalAvgPoolBackward(in[0].getShape(), dy)};
      },
      {x});
}

// Three spatial dims: windows over depth, height and width; padding before
// and after each (pads = [front, top, left, back, bottom, right]).
TEST(PoolTest, ThreeDimensionalWindows) {
  Tensor x(ElementType::F32, {1, 1, 2, 2, 3});
  for (int64_t i = 0; i < 12; ++i)
    x.floats()[i] = float(i);
  PoolParams p;
  p.kernel = {2, 2, 2};
  p.strides = {1, 1, 1};
  // Windows at w = 0 and w = 1: {0, 1, 3, 4, 6, 7, 9, 10} and one to the
  // right.
  expectTensor(maxPool(x, p), {1, 1, 1, 1, 2}, {10, 11});
  expectTensor(avgPool(x, p), {1, 1, 1, 1, 2}, {5, 6});
  p.pads = {0, 0, 1, 0, 0, 0};
  p.excludePad = true;
  expectTensor(avgPool(x, p), {1, 1, 1, 1, 3}, {4.5f, 5, 6});
  p.excludePad = false;
  expectTensor(avgPool(x, p), {1, 1, 1, 1, 3}, {2.25f, 5, 6});
}

TEST(PoolTest, ThreeDimensionalGradientsMatchFiniteDifferences) {
  PoolParams p;
  p.kernel = {2, 2, 2};
  p.strides = {1, 2, 1};
  p.pads = {1, 0, 1, 0, 1, 0};
  p.dilations = {1, 1, 2};
  Tensor x(ElementType::F32, {1, 2, 3, 4, 4});
  for (int64_t i = 0; i < 96; ++i)
    x.floats()[i] = float((i * 37) % 96) * 0.05f - 2.0f;
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) { return maxPool(in[0], p); },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{maxPoolBackward(in[0], dy, p)};
      },
      {x});
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) { return avgPool(in[0], p); },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{avgPoolBackward(in[0].getShape(), dy, p)};
      },
      {x});
}
