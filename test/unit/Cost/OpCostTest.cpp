//===- OpCostTest.cpp - Roofline op times
//----------------------------------===//

#include "weft/Cost/OpCost.h"
#include "gtest/gtest.h"

using namespace weft;

TEST(OpCost, ComputeBoundMatmul) {
  // 1 TFLOP on V100 fp32: 1e12 / (15.7e12 * 0.85).
  const DeviceType &v100 = *lookupDeviceType("V100");
  OpTime t = rooflineTime(v100, DType::FP32, {OpClass::Matmul, 1e12, 1e6});
  EXPECT_NEAR(t.seconds, 1e12 / (15.7e12 * 0.85), 1e-12);
  EXPECT_TRUE(t.computeBound);
  EXPECT_FALSE(t.measured);
}

TEST(OpCost, MemoryBoundElementwise) {
  // 1 GB through V100's memory at 95% of 900 GB/s.
  const DeviceType &v100 = *lookupDeviceType("V100");
  OpTime t = rooflineTime(v100, DType::FP32, {OpClass::Elementwise, 1e6, 1e9});
  EXPECT_NEAR(t.seconds, 1e9 / 855e9, 1e-12);
  EXPECT_FALSE(t.computeBound);
}

TEST(OpCost, DTypeChangesThePeak) {
  const DeviceType &v100 = *lookupDeviceType("V100");
  OpWork mm{OpClass::Matmul, 1e12, 0};
  double fp32 = rooflineTime(v100, DType::FP32, mm).seconds;
  double fp16 = rooflineTime(v100, DType::FP16, mm).seconds;
  EXPECT_NEAR(fp16, 1e12 / (125e12 * 0.6), 1e-12);
  EXPECT_LT(fp16, fp32 / 4);
  // V100 has no bf16 hardware: bf16 is no faster than fp32.
  EXPECT_GE(rooflineTime(v100, DType::BF16, mm).seconds, fp32);
}

TEST(OpCost, MeasuredOverridesRoofline) {
  const DeviceType &t4 = *lookupDeviceType("T4");
  OpTime t = opTime(t4, DType::FP32, {OpClass::Conv, 1e12, 1e9}, 0.25);
  EXPECT_EQ(t.seconds, 0.25);
  EXPECT_TRUE(t.measured);
  EXPECT_FALSE(opTime(t4, DType::FP32, {OpClass::Conv, 1e12, 1e9}).measured);
}

TEST(OpCost, BackwardAndTraining) {
  OpWork fwd{OpClass::Matmul, 3e9, 4e6};
  OpWork bwd = defaultBackwardWork(fwd);
  EXPECT_EQ(bwd.flops, 6e9);
  EXPECT_EQ(bwd.bytes, 8e6);
  EXPECT_EQ(bwd.opClass, OpClass::Matmul);
  const DeviceType &a100 = *lookupDeviceType("A100");
  OpCostTerms terms{fwd, bwd, 0};
  EXPECT_NEAR(trainingOpSeconds(a100, DType::FP32, terms),
              9e9 / (19.5e12 * 0.9), 1e-15);
}

TEST(OpCost, EmptyWorkIsFree) {
  const DeviceType &cpu = *lookupDeviceType("CPU");
  EXPECT_EQ(rooflineTime(cpu, DType::FP32, {}).seconds, 0);
}
