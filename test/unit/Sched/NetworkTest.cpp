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

// Two jobs spread over the same two nodes share both NICs. Job 0 computes
// 1 s per iteration and sends 1.25 GB (1 s alone at 10 Gbit/s); job 1
// computes 9 s and sends the same (intensity 4x9 vs 4x1 GPU-s per comm-s).
// Fair sharing halves both flows: comm 2 s -> job 0: (1+2)/(1+1) = 1.5,
// job 1: (9+2)/(9+1) = 1.1. Crux serves the more intense job 1 first:
// job 1 runs unslowed (1.0); job 0 gets nothing while job 1's flows stay
// active in this fluid model.
TEST(Crux, PrioritisesGpuIntenseJobs) {
  auto cluster = parseInlineCluster("gpus:v100=8,per-node=4,nic=10");
  ASSERT_TRUE(bool(cluster));
  NetJob light{0, {{0, 2}, {1, 2}}, {1.0, 1.25e9}};
  NetJob heavy{1, {{0, 2}, {1, 2}}, {9.0, 1.25e9}};
  auto fair = createNetworkModel("fair", *cluster);
  ASSERT_TRUE(bool(fair));
  std::vector<double> f = (*fair)->slowdowns({light, heavy});
  EXPECT_NEAR(f[0], 1.5, 1e-9);
  EXPECT_NEAR(f[1], 1.1, 1e-9);
  auto crux = createNetworkModel("crux", *cluster, 2);
  ASSERT_TRUE(bool(crux));
  std::vector<double> c = (*crux)->slowdowns({light, heavy});
  EXPECT_NEAR(c[1], 1.0, 1e-9);
  EXPECT_GT(c[0], f[0]);
  // A job alone is never slowed.
  std::vector<double> alone = (*crux)->slowdowns({light});
  EXPECT_NEAR(alone[0], 1.0, 1e-9);
  EXPECT_FALSE(bool(createNetworkModel("magic", *cluster)));
}
