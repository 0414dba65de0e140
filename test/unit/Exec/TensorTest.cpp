//===- TensorTest.cpp - Tensors, strides and reduced precision ------------===//

#include "weft/Exec/Tensor.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace weft::exec;

TEST(TensorTest, ShapeStridesAndZeros) {
  Tensor t(ElementType::F32, {2, 3, 4});
  EXPECT_EQ(t.getNumElements(), 24);
  EXPECT_EQ(stridesOf(t.getShape()), Shape({12, 4, 1}));
  EXPECT_EQ(t.floats()[23], 0.0f);
  EXPECT_EQ(shapeString(t.getShape()), "[2, 3, 4]");
  Tensor s = Tensor::scalar(2.5f);
  EXPECT_EQ(s.getRank(), 0);
  EXPECT_EQ(s.getNumElements(), 1);
  EXPECT_FALSE(Tensor().isValid());
}

TEST(TensorTest, ReshapeKeepsRowMajorOrder) {
  Tensor t = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.reshaped({3, 2});
  EXPECT_EQ(r.getShape(), llvm::ArrayRef<int64_t>({3, 2}));
  EXPECT_EQ(r.floats()[3], 4.0f);
}

TEST(TensorTest, ConvertBetweenFloatAndInteger) {
  Tensor t = Tensor::fromFloats({3}, {1.7f, -2.5f, 0.0f});
  t.convertTo(ElementType::I64);
  EXPECT_EQ(t.ints()[0], 1); // truncation toward zero
  EXPECT_EQ(t.ints()[1], -2);
  t.convertTo(ElementType::I1);
  EXPECT_EQ(t.ints()[0], 1);
  EXPECT_EQ(t.ints()[2], 0);
}

// bf16 keeps 7 mantissa bits: 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷ and
// rounds to the even one (1); 1 + 3·2⁻⁸ rounds up to 1 + 2⁻⁶.
TEST(TensorTest, BF16RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0f + 0x1p-8f), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(roundToBF16(1.0f + 0x1p-7f), 1.0f + 0x1p-7f);
  EXPECT_TRUE(std::isnan(roundToBF16(NAN)));
}

// fp16 keeps 10 mantissa bits and overflows above 65504.
TEST(TensorTest, F16RoundsAndOverflows) {
  EXPECT_EQ(roundToF16(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(roundToF16(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);
  EXPECT_EQ(roundToF16(65504.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(roundToF16(70000.0f)));
  Tensor t = Tensor::fromFloats({1}, {0.1f});
  t.convertTo(ElementType::F16);
  EXPECT_EQ(t.floats()[0], 0.0999755859375f);
}
