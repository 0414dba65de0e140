//===- LowerBoundTest.cpp - Training FLOPs / cluster peak
//------------------===//

#include "weft/Cost/LowerBound.h"
#include "TestSpecs.h"

using namespace weft;
using namespace weft::test;

TEST(LowerBound, HapClusterPeak) {
  // 16 V100 + 48 P100: 16*15.7 + 48*10.6 = 760 TFLOPS fp32, so 7.6e14
  // training FLOPs take at least 1 s.
  ClusterSpec spec = specFrom(R"(
defaults: {nic_bandwidth: 10.4 Gbit/s, intra_bandwidth: 150 GB/s}
nodes:
  - {name: v, count: 2, type: V100, devices: 8}
  - {name: p, count: 6, type: P100, devices: 8}
)");
  EXPECT_NEAR(lowerBoundSeconds(7.6e14, spec, DType::FP32), 1.0, 1e-12);
  // fp16: 16*125 + 48*21.2 = 3017.6 TFLOPS.
  EXPECT_NEAR(lowerBoundSeconds(3.0176e15, spec, DType::FP16), 1.0, 1e-12);
  // Only the 16 V100s: 251.2 TFLOPS.
  EXPECT_NEAR(lowerBoundSeconds(2.512e14, spec, firstDevices(16), DType::FP32),
              1.0, 1e-12);
  EXPECT_NEAR(ratioToLowerBound(3.0, 1.5), 2.0, 1e-15);
  EXPECT_EQ(trainingFlopsFromForward(1e12), 3e12);
}

TEST(LowerBound, MoreDevicesLowerTheBound) {
  ClusterSpec small = uniformCluster(1, 4);
  ClusterSpec large = uniformCluster(2, 4);
  EXPECT_LT(lowerBoundSeconds(1e15, large, DType::FP32),
            lowerBoundSeconds(1e15, small, DType::FP32));
}
