//===- PlacementTest.cpp - Gang placement, consolidation, failures -------===//

#include "weft/Sched/Placement.h"
#include "weft/Sched/SchedCluster.h"
#include "gtest/gtest.h"

using namespace weft::sched;

namespace {
SchedCluster eightByFour() {
  auto cluster = parseInlineCluster("gpus:v100=16,k80=4,per-node=4");
  EXPECT_TRUE(bool(cluster));
  return std::move(*cluster);
}
unsigned gpus(const PartPlacement &p) {
  unsigned n = 0;
  for (const NodeShare &s : p.shares)
    n += s.second;
  return n;
}
} // namespace

TEST(InlineCluster, BuildsNodes) {
  SchedCluster cluster = eightByFour();
  EXPECT_EQ(cluster.nodes.size(), 5u);
  EXPECT_EQ(cluster.totalGpus(), 20u);
  EXPECT_EQ(cluster.types[0].total, 16u);
  EXPECT_EQ(cluster.types[0].maxPerNode, 4u);
  EXPECT_EQ(cluster.findNode("k80-0"), 4);
  EXPECT_FALSE(bool(parseInlineCluster("gpus:v100=x")));
  EXPECT_FALSE(bool(parseInlineCluster("v100=4")));
  EXPECT_FALSE(bool(parseInlineCluster("gpus:per-node=4")));
}

TEST(NodePool, BestFitKeepsWholeNodesFree) {
  SchedCluster cluster = eightByFour();
  NodePool pool(cluster, std::vector<bool>(cluster.nodes.size(), false));
  auto one = pool.place(0, 1, true);
  ASSERT_TRUE(one);
  auto two = pool.place(0, 2, true);
  ASSERT_TRUE(two);
  // Both land on the same node (best fit): three nodes stay whole.
  EXPECT_EQ(one->shares[0].first, two->shares[0].first);
  auto eight = pool.place(0, 8, false);
  ASSERT_TRUE(eight);
  EXPECT_TRUE(eight->consolidated);
  EXPECT_EQ(eight->shares.size(), 2u);
  EXPECT_EQ(gpus(*eight), 8u);
  EXPECT_EQ(pool.freeOfType(0), 16u - 11u);
}

TEST(NodePool, SpreadsWhenFragmented) {
  SchedCluster cluster = eightByFour();
  NodePool pool(cluster, std::vector<bool>(cluster.nodes.size(), false));
  // Leave 2 free GPUs on each of the four V100 nodes.
  ASSERT_TRUE(pool.take({{0, 2}, {1, 2}, {2, 2}, {3, 2}}));
  EXPECT_FALSE(pool.place(0, 4, /*allowSpread=*/false));
  auto spread = pool.place(0, 4, true);
  ASSERT_TRUE(spread);
  EXPECT_FALSE(spread->consolidated);
  EXPECT_EQ(gpus(*spread), 4u);
  EXPECT_EQ(spread->shares.size(), 2u);
  pool.release(spread->shares);
  EXPECT_EQ(pool.freeOfType(0), 8u);
  EXPECT_FALSE(pool.place(0, 9, true));
}

TEST(NodePool, FailedNodesHoldNothing) {
  SchedCluster cluster = eightByFour();
  std::vector<bool> failed(cluster.nodes.size(), false);
  failed[4] = true; // the K80 node
  NodePool pool(cluster, failed);
  EXPECT_EQ(pool.freeOfType(1), 0u);
  EXPECT_FALSE(pool.place(1, 1, true));
  EXPECT_FALSE(pool.take({{4, 1}}));
  EXPECT_TRUE(pool.take({{0, 4}}));
  EXPECT_FALSE(pool.take({{0, 1}}));
}
