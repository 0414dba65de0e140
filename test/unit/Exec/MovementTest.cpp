//===- MovementTest.cpp - Transpose, concat, split, slice, gather ---------===//

#include "weft/Exec/Movement.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(MovementTest, TransposeHandComputed) {
  Tensor x = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(transpose(x, {1, 0}), {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor y = Tensor::fromFloats({1, 2, 2}, {1, 2, 3, 4});
  expectTensor(transpose(y, {2, 0, 1}), {2, 1, 2}, {1, 3, 2, 4});
}

TEST(MovementTest, ConcatAndSplitAreInverse) {
  Tensor a = Tensor::fromFloats({2, 1}, {1, 2});
  Tensor b = Tensor::fromFloats({2, 2}, {3, 4, 5, 6});
  Tensor c = concat({&a, &b}, 1);
  expectTensor(c, {2, 3}, {1, 3, 4, 2, 5, 6});
  std::vector<Tensor> parts = split(c, 1, {1, 2});
  expectTensor(parts[0], {2, 1}, {1, 2});
  expectTensor(parts[1], {2, 2}, {3, 4, 5, 6});
}

TEST(MovementTest, IntegerTensorsMove) {
  Tensor ids = Tensor::fromInts({2, 2}, {1, 2, 3, 4});
  Tensor t = transpose(ids, {1, 0});
  EXPECT_EQ(t.getElementType(), ElementType::I64);
  EXPECT_EQ(t.ints()[1], 3);
  Tensor s = slice(ids, {0, 1}, {2, 2}, {1, 1});
  EXPECT_EQ(s.ints()[0], 2);
  EXPECT_EQ(s.ints()[1], 4);
}

TEST(MovementTest, SliceWithSteps) {
  Tensor x = Tensor::fromFloats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  expectTensor(slice(x, {1, 0}, {2, 5}, {1, 2}), {1, 3}, {5, 7, 9});
  expectTensor(sliceBackward({2, 5}, Tensor::fromFloats({1, 3}, {1, 2, 3}),
                             {1, 0}, {1, 2}),
               {2, 5}, {0, 0, 0, 0, 0, 1, 0, 2, 0, 3});
}

TEST(MovementTest, GatherRowsAndColumns) {
  Tensor table = Tensor::fromFloats({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor ids = Tensor::fromInts({2, 2}, {2, 0, -1, 1});
  expectTensor(gather(table, ids, 0), {2, 2, 2}, {5, 6, 1, 2, 5, 6, 3, 4});
  Tensor col = Tensor::fromInts({}, {1});
  expectTensor(gather(table, col, 1), {3}, {2, 4, 6});
}

TEST(MovementTest, GatherBackwardAddsRepeatedRows) {
  Tensor ids = Tensor::fromInts({3}, {1, 1, 0});
  Tensor dy = Tensor::fromFloats({3, 2}, {1, 2, 3, 4, 5, 6});
  expectTensor(gatherBackward({2, 2}, ids, dy, 0), {2, 2}, {5, 6, 4, 6});
}

TEST(MovementTest, GradientsMatchFiniteDifferences) {
  Tensor x = randomTensor({2, 3, 4}, 81);
  llvm::SmallVector<int64_t> perm = {2, 0, 1};
  expectGradientsMatch(
      [&](const std::vector<Tensor> &in) { return transpose(in[0], perm); },
      [&](const std::vector<Tensor> &, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{transposeBackward(dy, perm)};
      },
      {x});
  expectGradientsMatch(
      [](const std::vector<Tensor> &in) {
        return slice(in[0], {0, 1, 1}, {2, 3, 4}, {1, 1, 2});
      },
      [](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{
            sliceBackward(in[0].getShape(), dy, {0, 1, 1}, {1, 1, 2})};
      },
      {x});
  Tensor ids = Tensor::fromInts({2, 2}, {2, 0, 2, 1});
  expectGradientsMatch(
      [&](const std::vector<Tensor> &in) { return gather(in[0], ids, 1); },
      [&](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{
            gatherBackward(in[0].getShape(), ids, dy, 1)};
      },
      {x});
}
