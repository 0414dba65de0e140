//===- ElementwiseTest.cpp - Broadcasting binary, compare, select, cast ---===//

#include "weft/Exec/Elementwise.h"
#include "GradCheck.h"
#include <cmath>

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(ElementwiseTest, BroadcastShapes) {
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), Shape({2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {5}), Shape({5}));
}

TEST(ElementwiseTest, AddBroadcastsRowAndColumn) {
  Tensor col = Tensor::fromFloats({2, 1}, {10, 20});
  Tensor row = Tensor::fromFloats({3}, {1, 2, 3});
  expectTensor(binary(BinaryKind::Add, col, row), {2, 3},
               {11, 12, 13, 21, 22, 23});
}

TEST(ElementwiseTest, HandComputedKinds) {
  Tensor a = Tensor::fromFloats({3}, {1, 4, 9});
  Tensor b = Tensor::fromFloats({3}, {2, 2, 0.5f});
  expectTensor(binary(BinaryKind::Sub, a, b), {3}, {-1, 2, 8.5f});
  expectTensor(binary(BinaryKind::Mul, a, b), {3}, {2, 8, 4.5f});
  expectTensor(binary(BinaryKind::Div, a, b), {3}, {0.5f, 2, 18});
  expectTensor(binary(BinaryKind::Pow, a, b), {3}, {1, 16, 3});
  expectTensor(binary(BinaryKind::Min, a, b), {3}, {1, 2, 0.5f});
  expectTensor(binary(BinaryKind::Max, a, b), {3}, {2, 4, 9});
}

TEST(ElementwiseTest, IntegerArithmetic) {
  Tensor a = Tensor::fromInts({2}, {7, -7});
  Tensor b = Tensor::fromInts({}, {2});
  Tensor q = binary(BinaryKind::Div, a, b);
  EXPECT_EQ(q.ints()[0], 3);
  EXPECT_EQ(q.ints()[1], -3);
  EXPECT_EQ(binary(BinaryKind::Mul, a, b).ints()[1], -14);
}

TEST(ElementwiseTest, ReduceToShapeSumsBroadcastDims) {
  Tensor g = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reduceToShape(g, {3}), {3}, {5, 7, 9});
  expectTensor(reduceToShape(g, {2, 1}), {2, 1}, {6, 15});
  expectTensor(reduceToShape(g, {}), {}, {21});
}

TEST(ElementwiseTest, ExpandCopiesAlongNewDims) {
  Tensor x = Tensor::fromFloats({1, 2}, {5, 6});
  expectTensor(broadcastTo(x, {3, 2}), {3, 2}, {5, 6, 5, 6, 5, 6});
}

class BinaryGradTest : public ::testing::TestWithParam<BinaryKind> {};

TEST_P(BinaryGradTest, MatchesFiniteDifferencesWithBroadcast) {
  BinaryKind kind = GetParam();
  Tensor lhs = randomTensor({2, 3, 4}, 1);
  Tensor rhs = randomTensor({3, 1}, 2);
  if (kind == BinaryKind::Pow || kind == BinaryKind::Div)
    for (int64_t i = 0; i < lhs.getNumElements(); ++i)
      lhs.floats()[i] = 0.5f + std::fabs(lhs.floats()[i]);
  if (kind == BinaryKind::Div)
    for (int64_t i = 0; i < rhs.getNumElements(); ++i)
      rhs.floats()[i] = 1.0f + std::fabs(rhs.floats()[i]);
  expectGradientsMatch(
      [&](const std::vector<Tensor> &in) { return binary(kind, in[0], in[1]); },
      [&](const std::vector<Tensor> &in, const Tensor &y, const Tensor &dy) {
        BinaryGrads g = binaryBackward(kind, in[0], in[1], y, dy);
        return std::vector<Tensor>{g.lhs, g.rhs};
      },
      {lhs, rhs});
}

static std::string
BinaryKindName(const ::testing::TestParamInfo<BinaryKind> &info) {
  const char *names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max"};
  return names[int(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Kinds, BinaryGradTest,
                         ::testing::Values(BinaryKind::Add, BinaryKind::Sub,
                                           BinaryKind::Mul, BinaryKind::Div,
                                           BinaryKind::Pow, BinaryKind::Min,
                                           BinaryKind::Max),
                         BinaryKindName);

TEST(ElementwiseTest, CompareGivesI1WithBroadcast) {
  Tensor a = Tensor::fromInts({3}, {1, 2, 3});
  Tensor b = Tensor::fromInts({}, {2});
  Tensor lt = compare(ComparePredicate::Lt, a, b);
  EXPECT_EQ(lt.getElementType(), ElementType::I1);
  EXPECT_EQ(llvm::ArrayRef<int64_t>(lt.ints(), 3),
            llvm::ArrayRef<int64_t>({1, 0, 0}));
  Tensor ge = compare(ComparePredicate::Ge, Tensor::fromFloats({2}, {0.5f, 2}),
                      Tensor::fromFloats({1}, {1}));
  EXPECT_EQ(ge.ints()[0], 0);
  EXPECT_EQ(ge.ints()[1], 1);
  EXPECT_FALSE(parseComparePredicate("approx"));
}

TEST(ElementwiseTest, SelectAndItsGradient) {
  Tensor cond = Tensor::fromInts({2, 1}, {1, 0}, ElementType::I1);
  Tensor lhs = Tensor::fromFloats({2, 2}, {1, 2, 3, 4});
  Tensor rhs = Tensor::fromFloats({}, {-9});
  expectTensor(select(cond, lhs, rhs), {2, 2}, {1, 2, -9, -9});
  BinaryGrads g = selectBackward(cond, {2, 2}, {},
                                 Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  expectTensor(g.lhs, {2, 2}, {1, 2, 0, 0});
  expectTensor(g.rhs, {}, {7});
}

TEST(ElementwiseTest, CastToBF16Rounds) {
  Tensor x = Tensor::fromFloats({1}, {1.0f + 0x1p-9f});
  Tensor y = cast(x, ElementType::BF16);
  EXPECT_EQ(y.getElementType(), ElementType::BF16);
  EXPECT_EQ(y.floats()[0], 1.0f);
}
