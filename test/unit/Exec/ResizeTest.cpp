//===- ResizeTest.cpp - Nearest, linear and cubic resampling --------------===//

#include "weft/Exec/Resize.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

static ResizeParams params(std::string mode, std::string coordinates,
                           std::vector<double> scales) {
  ResizeParams p;
  p.mode = std::move(mode);
  p.coordinateMode = std::move(coordinates);
  p.scales = std::move(scales);
  return p;
}

// Nearest, asymmetric, floor (Upsample's semantics): each element repeats.
TEST(ResizeTest, NearestRepeats) {
  ResizeParams p = params("nearest", "asymmetric", {1, 2, 3});
  p.nearestMode = "floor";
  Tensor x = Tensor::fromFloats({1, 2, 1}, {1, 2});
  expectTensor(resize(x, p, {1, 4, 3}), {1, 4, 3},
               {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
}

// Linear, half_pixel, [1, 2] upsampled 2×: result x maps to (x + 0.5) / 2 −
// 0.5 = −0.25, 0.25, 0.75, 1.25, clamped at the edges.
TEST(ResizeTest, LinearHalfPixel) {
  Tensor x = Tensor::fromFloats({2}, {1, 2});
  expectTensor(resize(x, params("linear", "half_pixel", {2}), {4}), {4},
               {1, 1.25, 1.75, 2});
}

// align_corners keeps the ends: 3 → 5 samples at 0, 0.5, 1, 1.5, 2.
TEST(ResizeTest, LinearAlignCorners) {
  Tensor x = Tensor::fromFloats({3}, {0, 4, 8});
  expectTensor(resize(x, params("linear", "align_corners", {5.0 / 3}), {5}),
               {5}, {0, 2, 4, 6, 8});
}

// Cubic (a = −0.75) at the midpoint of 0, 0, 1, 1: weights −0.09375,
// 0.59375, 0.59375, −0.09375 give 0.5; a constant stays constant.
TEST(ResizeTest, CubicKernel) {
  ResizeParams p = params("cubic", "align_corners", {7.0 / 4});
  Tensor x = Tensor::fromFloats({4}, {0, 0, 1, 1});
  Tensor y = resize(x, p, {7});
  EXPECT_NEAR(y.floats()[3], 0.5, 1e-6);
  Tensor c = resize(Tensor::filled({4}, 3.0f), p, {7});
  for (int64_t i = 0; i < 7; ++i)
    EXPECT_NEAR(c.floats()[i], 3.0, 1e-5) << i;
}

static double dot(const Tensor &a, const Tensor &b) {
  double s = 0;
  for (int64_t i = 0; i < a.getNumElements(); ++i)
    s += double(a.floats()[i]) * b.floats()[i];
  return s;
}

// The backward is the adjoint of the forward for every mode: <resize(x),
// y> = <x, resizeBackward(y)>, dims resampled one after another.
TEST(ResizeTest, BackwardIsTheAdjoint) {
  struct Case {
    std::string mode, coordinates;
    bool antialias, excludeOutside;
  } cases[] = {{"nearest", "half_pixel", false, false},
               {"linear", "pytorch_half_pixel", false, false},
               {"linear", "half_pixel_symmetric", true, false},
               {"cubic", "align_corners", false, false},
               {"cubic", "half_pixel", true, true},
               {"cubic", "asymmetric", false, true}};
  for (const Case &c : cases) {
    ResizeParams p = params(c.mode, c.coordinates, {1, 0.6, 1.75, 1});
    p.antialias = c.antialias;
    p.excludeOutside = c.excludeOutside;
    Tensor x = randomTensor({2, 5, 4, 3}, 51);
    Tensor y = resize(x, p, {2, 3, 7, 3});
    Tensor r = randomTensor(y.getShape(), 52);
    Tensor back = resizeBackward(x.getShape(), r, p);
    ASSERT_EQ(back.getShape(), x.getShape());
    EXPECT_NEAR(dot(y, r), dot(x, back), 1e-4 * std::max(1.0, dot(y, r)))
        << c.mode << " " << c.coordinates;
  }
}

TEST(ResizeTest, GradientsMatchCentralDifferences) {
  ResizeParams p = params("linear", "half_pixel", {1, 1, 2, 0.5});
  p.antialias = true;
  expectGradientsMatch(
      [p](const std::vector<Tensor> &in) {
        return resize(in[0], p, {1, 2, 6, 2});
      },
      [p](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{resizeBackward(in[0].getShape(), dy, p)};
      },
      {randomTensor({1, 2, 3, 4}, 53)});
}
