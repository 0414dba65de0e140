//===- GatherElementsTest.cpp - GatherElements and its scatter-add --------===//

#include "GradCheck.h"
#include "weft/Exec/Movement.h"

using namespace weft::exec;
using namespace weft::exec::testing;

// ONNX's examples (test_gather_elements_0, _1, _negative_indices).
TEST(GatherElementsTest, OnnxExamples) {
  Tensor a = Tensor::fromFloats({2, 2}, {1, 2, 3, 4});
  expectTensor(gatherElements(a, Tensor::fromInts({2, 2}, {0, 0, 1, 0}), 1),
               {2, 2}, {1, 1, 4, 3});
  Tensor b = Tensor::fromFloats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expectTensor(
      gatherElements(b, Tensor::fromInts({2, 3}, {1, 2, 0, 2, 0, 0}), 0),
      {2, 3}, {4, 8, 3, 7, 2, 3});
  expectTensor(
      gatherElements(b, Tensor::fromInts({2, 3}, {-1, -2, 0, -2, 0, 0}), 0),
      {2, 3}, {7, 5, 3, 4, 2, 3});
}

// The indices may be shorter than the data along other dims; a 3-d pick
// along the middle axis (a loss's target log-probability, N×C×d).
TEST(GatherElementsTest, SmallerIndicesAndAMiddleAxis) {
  Tensor x(ElementType::F32, {2, 3, 2});
  for (int64_t i = 0; i < 12; ++i)
    x.floats()[i] = float(i);
  Tensor idx = Tensor::fromInts({2, 1, 2}, {2, 0, 1, 1});
  // x[n][c][d] = 6n + 2c + d.
  expectTensor(gatherElements(x, idx, 1), {2, 1, 2}, {4, 1, 8, 9});
  Tensor ints = Tensor::fromInts({2, 2}, {10, 20, 30, 40});
  Tensor picked = gatherElements(ints, Tensor::fromInts({1, 2}, {1, 0}), 0);
  EXPECT_FALSE(picked.isFloat());
  EXPECT_EQ(picked.ints()[0], 30);
  EXPECT_EQ(picked.ints()[1], 20);
}

TEST(GatherElementsTest, BackwardAddsRepeatedReads) {
  Tensor idx = Tensor::fromInts({2, 3}, {1, 1, 0, 2, 1, 1});
  Tensor dy = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(gatherElementsBackward({3, 3}, idx, dy, 0), {3, 3},
               {0, 0, 3, 1, 7, 6, 4, 0, 0});
}

TEST(GatherElementsTest, GradientsMatchFiniteDifferences) {
  Tensor x = randomTensor({3, 4, 2}, 5);
  Tensor idx =
      Tensor::fromInts({3, 2, 2}, {3, 0, -1, 2, 1, 1, 0, 3, 2, 2, 0, -4});
  expectGradientsMatch(
      [&](const std::vector<Tensor> &in) {
        return gatherElements(in[0], idx, 1);
      },
      [&](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{
            gatherElementsBackward(in[0].getShape(), idx, dy, 1)};
      },
      {x});
}
