//===- MemoryTest.cpp - Per-device memory terms
//----------------------------===//

#include "weft/Cost/Memory.h"
#include "gtest/gtest.h"

using namespace weft;

TEST(Memory, BytesPerParameter) {
  // fp32 + Adam: 4 (weights) + 4 (grads) + 8 (two moments) = 16.
  EXPECT_EQ(parameterBytesPerElement(DType::FP32), 4);
  EXPECT_EQ(gradientBytesPerElement(DType::FP32), 4);
  EXPECT_EQ(optimizerBytesPerElement(Optimizer::Adam, DType::FP32), 8);
  // Mixed + Adam: 2 + 2 + (4 master + 8 moments) = 16 (ZeRO's 2+2+12).
  EXPECT_EQ(parameterBytesPerElement(DType::BF16), 2);
  EXPECT_EQ(gradientBytesPerElement(DType::FP16), 2);
  EXPECT_EQ(optimizerBytesPerElement(Optimizer::Adam, DType::FP16), 12);
  EXPECT_EQ(optimizerBytesPerElement(Optimizer::SGD, DType::FP32), 0);
  EXPECT_EQ(optimizerBytesPerElement(Optimizer::SGD, DType::BF16), 4);
  EXPECT_EQ(optimizerBytesPerElement(Optimizer::Momentum, DType::FP32), 4);
}

TEST(Memory, ReplicatedBertBase) {
  // 110e6 parameters, 1e9 kept activation elements.
  MemoryBreakdown fp32 = replicatedMemory(110e6, 1e9, DType::FP32);
  EXPECT_DOUBLE_EQ(fp32.parameters, 440e6);
  EXPECT_DOUBLE_EQ(fp32.optimizerState, 880e6);
  EXPECT_DOUBLE_EQ(fp32.activations, 4e9);
  EXPECT_DOUBLE_EQ(fp32.total(), 110e6 * 16 + 4e9);
  MemoryBreakdown mixed = replicatedMemory(110e6, 1e9, DType::BF16);
  EXPECT_DOUBLE_EQ(mixed.total(), 110e6 * 16 + 2e9);
  EXPECT_TRUE(fitsInMemory(fp32, *lookupDeviceType("V100")));
  EXPECT_FALSE(fitsInMemory(fp32, *lookupDeviceType("K80"), 0.6));
}

TEST(Memory, ShardedTermsArePricedSeparately) {
  // ZeRO-1-like: full weights and grads, a quarter of the optimizer state.
  MemoryBreakdown m =
      deviceMemory({1e9, 1e9, 0.25e9, 0}, DType::FP16, Optimizer::Adam);
  EXPECT_DOUBLE_EQ(m.parameters, 2e9);
  EXPECT_DOUBLE_EQ(m.gradients, 2e9);
  EXPECT_DOUBLE_EQ(m.optimizerState, 3e9);
  EXPECT_DOUBLE_EQ(m.activations, 0);
}

TEST(Memory, OptimizerNames) {
  for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam})
    EXPECT_EQ(parseOptimizer(toString(o)), o);
  EXPECT_FALSE(parseOptimizer("adamw2").has_value());
}
