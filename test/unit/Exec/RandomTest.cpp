//===- RandomTest.cpp - Counter-based random numbers ----------------------===//

#include "weft/Exec/Random.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace weft::exec;

TEST(RandomTest, PureFunctionOfSeedStreamIndex) {
  EXPECT_EQ(randomBits(1, 2, 3), randomBits(1, 2, 3));
  EXPECT_NE(randomBits(1, 2, 3), randomBits(1, 2, 4));
  EXPECT_NE(randomBits(1, 2, 3), randomBits(2, 2, 3));
  EXPECT_NE(streamOf("a.weight"), streamOf("a.bias"));
}

// 20000 draws: the mean of U(0,1) is 0.5 ± 0.002 (σ), of N(0,1) 0 ± 0.007,
// the variance of N(0,1) 1 ± 0.01; bounds are about 6σ.
TEST(RandomTest, MomentsOfUniformAndNormal) {
  const int n = 20000;
  double su = 0, sn = 0, sn2 = 0;
  for (int i = 0; i < n; ++i) {
    double u = uniform01(5, 6, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    double z = standardNormal(5, 7, i);
    sn += z;
    sn2 += z * z;
  }
  EXPECT_NEAR(su / n, 0.5, 0.013);
  EXPECT_NEAR(sn / n, 0.0, 0.045);
  EXPECT_NEAR(sn2 / n, 1.0, 0.06);
}

TEST(RandomTest, FillNormalMatchesStandardNormal) {
  float out[5];
  fillNormal(out, 5, 3, 4, 2.0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(out[i], float(2.0 * standardNormal(3, 4, i))) << i;
}
