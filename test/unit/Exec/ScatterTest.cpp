//===- ScatterTest.cpp - ScatterElements and ScatterND --------------------===//

#include "weft/Exec/Scatter.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

// ONNX's ScatterElements example (axis 0).
TEST(ScatterTest, ElementsAlongAxis0) {
  Tensor data = Tensor::zeros({3, 3});
  Tensor idx = Tensor::fromInts({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor upd = Tensor::fromFloats({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2});
  auto targets = scatterElementsTargets(data.getShape(), idx, 0, {});
  expectTensor(scatter(data, upd, targets, ScatterReduction::None), {3, 3},
               {2.0, 1.1, 0, 1.0, 0, 2.2, 0, 2.1, 1.2});
}

// ONNX's ScatterND example: slices of rank 0 at four indices; negative
// indices count from the end.
TEST(ScatterTest, NdWritesSlices) {
  Tensor data = Tensor::fromFloats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor idx = Tensor::fromInts({4, 1}, {4, 3, 1, -1});
  Tensor upd = Tensor::fromFloats({4}, {9, 10, 11, 12});
  auto targets = scatterNdTargets(data.getShape(), idx, {});
  expectTensor(scatter(data, upd, targets, ScatterReduction::None), {8},
               {1, 11, 3, 10, 9, 6, 7, 12});
  expectTensor(scatter(data, upd, targets, ScatterReduction::Mul), {8},
               {1, 22, 3, 40, 45, 6, 7, 96});
}

// Duplicates: `none` keeps the last update and sends it the gradient;
// `add` sums; `max` keeps the largest (the data on ties).
TEST(ScatterTest, DuplicateIndices) {
  Tensor data = Tensor::fromFloats({1, 3}, {5, 5, 5});
  Tensor idx = Tensor::fromInts({1, 3}, {1, 1, 2});
  Tensor upd = Tensor::fromFloats({1, 3}, {7, 3, 5});
  auto targets = scatterElementsTargets(data.getShape(), idx, 1, {});
  expectTensor(scatter(data, upd, targets, ScatterReduction::None), {1, 3},
               {5, 3, 5});
  expectTensor(scatter(data, upd, targets, ScatterReduction::Add), {1, 3},
               {5, 15, 10});
  expectTensor(scatter(data, upd, targets, ScatterReduction::Max), {1, 3},
               {5, 7, 5});
  Tensor dy = Tensor::fromFloats({1, 3}, {1, 2, 3});
  ScatterGrads none =
      scatterBackward(data, upd, targets, ScatterReduction::None, dy);
  expectTensor(none.data, {1, 3}, {1, 0, 0});
  expectTensor(none.updates, {1, 3}, {0, 2, 3});
  ScatterGrads max =
      scatterBackward(data, upd, targets, ScatterReduction::Max, dy);
  expectTensor(max.data, {1, 3}, {1, 0, 3});
  expectTensor(max.updates, {1, 3}, {2, 0, 0});
}

// On a shard (rows 2 and 3 of 4) an index names a global row: row 3 is
// local row 1, rows 0 and −4 are outside the shard.
TEST(ScatterTest, ShardTargetsUseTheGlobalOffset) {
  Shape global{4, 2}, offsets{2, 0};
  GlobalView view{global, offsets};
  Tensor idx = Tensor::fromInts({2, 1}, {3, -4});
  auto nd = scatterNdTargets({2, 2}, idx, view);
  EXPECT_EQ(nd, (std::vector<int64_t>{2, 3, -1, -1}));
  Tensor idx2 = Tensor::fromInts({2, 2}, {0, 3, -1, 2});
  auto el = scatterElementsTargets({2, 2}, idx2, 0, view);
  EXPECT_EQ(el, (std::vector<int64_t>{-1, 3, 2, 1}));
}

static void checkGrads(ScatterReduction r) {
  // Distinct positions but one written twice; values far apart so that max
  // and min keep their winners under the finite-difference steps.
  Tensor idx = Tensor::fromInts({2, 2}, {0, 2, 0, 1});
  expectGradientsMatch(
      [idx, r](const std::vector<Tensor> &in) {
        return scatter(in[0], in[1],
                       scatterElementsTargets(in[0].getShape(), idx, 1, {}), r);
      },
      [idx, r](const std::vector<Tensor> &in, const Tensor &,
               const Tensor &dy) {
        ScatterGrads g = scatterBackward(
            in[0], in[1], scatterElementsTargets(in[0].getShape(), idx, 1, {}),
            r, dy);
        return std::vector<Tensor>{g.data, g.updates};
      },
      {Tensor::fromFloats({2, 3}, {0.5, -1.5, 2.0, 1.0, -0.4, 0.9}),
       Tensor::fromFloats({2, 2}, {1.7, -0.6, 0.8, 2.5})});
}

TEST(ScatterTest, GradientsNone) { checkGrads(ScatterReduction::None); }
TEST(ScatterTest, GradientsAdd) { checkGrads(ScatterReduction::Add); }
TEST(ScatterTest, GradientsMul) { checkGrads(ScatterReduction::Mul); }
TEST(ScatterTest, GradientsMax) { checkGrads(ScatterReduction::Max); }
TEST(ScatterTest, GradientsMin) { checkGrads(ScatterReduction::Min); }
