//===- SynthRatiosTest.cpp - Per-class search ratios from LP ratios -------===//

#include "SynthRatios.h"
#include "SynthTestUtil.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::synth;

namespace {

// Two nodes of two devices: class 0 (Fast) and class 1 (Slow), two devices
// each, so per-class ratios sum to 1 when 2·(B_0 + B_1) = 1.
TEST(ClassRatios, WeightedMeanOverSegmentsSumsToOne) {
  ClusterSpec spec = test::cluster(2, 2);
  ASSERT_EQ(spec.classes.size(), 2u);
  ratio::Ratios rows = {{0.3, 0.2}, {0.25, 0.25}};
  // Equal weights: the plain mean (0.275, 0.225).
  std::vector<double> plain = classRatiosOf(rows, spec);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_NEAR(plain[0], 0.275, 1e-12);
  EXPECT_NEAR(plain[1], 0.225, 1e-12);
  // The first segment three times as heavy: (0.2875, 0.2125).
  std::vector<double> weighted = classRatiosOf(rows, spec, {3, 1});
  ASSERT_EQ(weighted.size(), 2u);
  EXPECT_NEAR(weighted[0], 0.2875, 1e-12);
  EXPECT_NEAR(weighted[1], 0.2125, 1e-12);
  // Only the second segment weighs: it is returned as it is.
  std::vector<double> second = classRatiosOf(rows, spec, {0, 5});
  ASSERT_EQ(second.size(), 2u);
  EXPECT_NEAR(second[0], 0.25, 1e-12);
  EXPECT_NEAR(second[1], 0.25, 1e-12);
}

// Ratios that do not sum to 1 over the devices are rescaled: (0.2, 0.1)
// covers 0.6 of the extent and becomes (1/3, 1/6).
TEST(ClassRatios, RescalesToTheMesh) {
  ClusterSpec spec = test::cluster(2, 2);
  std::vector<double> r = classRatiosOf({{0.2, 0.1}}, spec);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(r[1], 1.0 / 6, 1e-12);
}

TEST(ClassRatios, NothingToWeighIsEmpty) {
  ClusterSpec spec = test::cluster(2, 2);
  EXPECT_TRUE(classRatiosOf({}, spec).empty());
  EXPECT_TRUE(classRatiosOf({{0.3, 0.2}}, spec, {0}).empty());
}

} // namespace
