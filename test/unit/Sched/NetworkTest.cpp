//===- NetworkTest.cpp - Crux priorities and link sharing ----------------===//

#include "../../../lib/Sched/Network/NetworkImpl.h"
#include "TestOracle.h"

using namespace weft::sched;

// Jobs 0 and 1 contend heavily, 1 and 2 lightly, 0 and 2 not at all: with
// two levels the cheapest split leaves only the light edge inside a level,
// i.e. {0} | {1, 2}.
TEST(Crux, CompressesPrioritiesByMaxCut) {
  std::vector<std::vector<double>> w(3, std::vector<double>(3, 0));
  w[0][1] = 10;
  w[1][2] = 1;
  std::vector<unsigned> level = compressPriorities(w, 2);
  EXPECT_EQ(level, (std::vector<unsigned>{0, 1, 1}));
  // Edge weights reversed: {0, 1} | {2}.
  w[0][1] = 1;
  w[1][2] = 10;
  EXPECT_EQ(compressPriorities(w, 2), (std::vector<unsigned>{0, 0, 1}));
  // Enough levels: one per job; one level: all together.
  EXPECT_EQ(compressPriorities(w, 5), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(compressPriorities(w, 1), (std::vector<unsigned>{0, 0, 0}));
}

// Two jobs spread over the same two nodes share both NICs (10 Gbit/s =
// 1.25e9 B/s). Each sends 1.25e9 B per iteration (1 s alone). Job 0
// computes 0.25 s: demand 1.25e9 / 1.25 = 1e9 B/s, intensity 4 x 0.25 / 1
// = 1. Job 1 computes 0.5 s: demand 0.833e9 B/s, intensity 2.
// Fair: 0.625e9 each -> slowdowns 1e9 / 0.625e9 = 1.6 and 0.833 / 0.625 =
// 1.333. Crux serves job 1 first: it gets its demand (1.0), job 0 the rest,
// 0.4167e9 -> 2.4.
TEST(Crux, PrioritisesGpuIntenseJobs) {
  auto cluster = parseInlineCluster("gpus:v100=8,per-node=4,nic=10");
  ASSERT_TRUE(bool(cluster));
  NetJob light{0, {{0, 2}, {1, 2}}, {0.25, 1.25e9}};
  NetJob heavy{1, {{0, 2}, {1, 2}}, {0.5, 1.25e9}};
  auto fair = createNetworkModel("fair", *cluster);
  ASSERT_TRUE(bool(fair));
  std::vector<double> f = (*fair)->slowdowns({light, heavy});
  EXPECT_NEAR(f[0], 1.6, 1e-9);
  EXPECT_NEAR(f[1], (1.25 / 1.5) / 0.625, 1e-9);
  auto crux = createNetworkModel("crux", *cluster, 2);
  ASSERT_TRUE(bool(crux));
  std::vector<double> c = (*crux)->slowdowns({light, heavy});
  EXPECT_NEAR(c[1], 1.0, 1e-9);
  EXPECT_NEAR(c[0], 1.0 / (1.25 - 1.25 / 1.5), 1e-9);
  // A job alone is never slowed; light traffic is not slowed either.
  std::vector<double> alone = (*crux)->slowdowns({light});
  EXPECT_NEAR(alone[0], 1.0, 1e-9);
  NetJob quiet{2, {{0, 2}, {1, 2}}, {9.0, 1.25e9}};
  std::vector<double> q = (*fair)->slowdowns({quiet, heavy});
  EXPECT_NEAR(q[0], 1.0, 1e-9);
  EXPECT_NEAR(q[1], 1.0, 1e-9);
  EXPECT_FALSE(bool(createNetworkModel("magic", *cluster)));
}
