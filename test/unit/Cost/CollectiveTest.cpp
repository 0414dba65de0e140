//===- CollectiveTest.cpp - Collective times against hand-computed numbers
//-===//
//
// Every expected value is worked out in the comment above it.
//
//===----------------------------------------------------------------------===//

#include "weft/Cost/Collective.h"
#include "TestSpecs.h"
#include "weft/Cost/Network.h"

using namespace weft;
using namespace weft::test;

TEST(Collective, RingAllReduceOfTheIssue) {
  // 1 GB over 8 devices on a 100 Gbit/s ring with 5 us latency:
  // 2*7/8*1e9*8/1e11 + 2*7*5e-6 = 0.140070 s.
  ClusterSpec spec = uniformCluster(8, 1, /*nic=*/100, /*nicUs=*/5);
  double t = allReduceSeconds(spec, firstDevices(8), 1e9);
  EXPECT_NEAR(t, 0.140070, 1e-9);
}

TEST(Collective, RingAllReduceInsideANode) {
  // 8 devices, 100 GB/s per device, 2 us: 14 * (1.25e8/1e11 + 2e-6).
  ClusterSpec spec = uniformCluster(1, 8, 100, 5, /*intra=*/100, /*us=*/2);
  EXPECT_NEAR(allReduceSeconds(spec, firstDevices(8), 1e9), 0.017528, 1e-9);
}

TEST(Collective, HierarchicalAllReduce) {
  // 2 nodes x 4 devices; intra 100 GB/s 2 us; NIC 12.5 GB/s 5 us; 1 GB.
  // Intra reduce-scatter: 3 * (2e-6 + 2.5e8/1e11) = 0.007506, twice.
  // Inter: 4 rings of 2 nodes, chunk 1e9/8; each NIC sends 4 chunks = 5e8
  // per round: 2 rounds * (5e-6 + 5e8/12.5e9) = 0.08001.
  ClusterSpec spec = uniformCluster(2, 4, 100, 5, 100, 2);
  EXPECT_NEAR(
      allReduceSeconds(spec, firstDevices(8), 1e9, AllReduceAlgo::Hierarchical),
      0.095022, 1e-9);
  // The flat ring crosses a NIC with 1.25e8 per round: 14 * (5e-6 + 0.01).
  EXPECT_NEAR(allReduceSeconds(spec, firstDevices(8), 1e9), 0.14007, 1e-9);
}

TEST(Collective, TreeAllReduce) {
  // 8 nodes x 4 devices; intra 100 GB/s 2 us; NIC 12.5 GB/s 5 us; 1 MB.
  // Latency: a chain of 3 intra hops (6 us) and floor(log2 8) = 3 tree
  // hops (15 us). Bandwidth of the reduce half: every non-root leader
  // sends 0.5 MB up each of the two trees, 1 MB through its NIC:
  // 1e6 / 12.5e9 = 8e-5 (the chain's 1e6 / 1e11 is less). Reduce and
  // broadcast: 2 * (21e-6 + 8e-5) = 2.02e-4 s.
  ClusterSpec spec = uniformCluster(8, 4, 100, 5, 100, 2);
  std::vector<unsigned> group = firstDevices(32);
  EXPECT_NEAR(allReduceSeconds(spec, group, 1e6, AllReduceAlgo::Tree), 2.02e-4,
              1e-12);
  // Ring: 62 * (5e-6 + 31250 / 12.5e9) = 4.65e-4. Hierarchical: intra
  // 2 * 3 * (2e-6 + 2.5e5 / 1e11) = 2.7e-5, inter 14 * (5e-6 + 1.25e5 /
  // 12.5e9) = 2.1e-4: 2.37e-4. The tree is fastest at 1 MB ...
  EXPECT_NEAR(allReduceSeconds(spec, group, 1e6), 4.65e-4, 1e-12);
  EXPECT_NEAR(allReduceSeconds(spec, group, 1e6, AllReduceAlgo::Hierarchical),
              2.37e-4, 1e-12);
  EXPECT_EQ(fastestAllReduce(spec, group, 1e6), AllReduceAlgo::Tree);
  // ... and at 1 GB its bandwidth term (2 * 1e9 / 12.5e9 = 0.16 s) loses
  // to the hierarchical one's (0.015012 + 0.14007 = 0.155082 s).
  EXPECT_NEAR(allReduceSeconds(spec, group, 1e9, AllReduceAlgo::Tree), 0.160042,
              1e-9);
  EXPECT_EQ(fastestAllReduce(spec, group, 1e9), AllReduceAlgo::Hierarchical);
  // Inside one node the tree is a chain, never faster than the ring.
  ClusterSpec node = uniformCluster(1, 8, 100, 5, 100, 2);
  EXPECT_EQ(fastestAllReduce(node, firstDevices(8), 1e6), AllReduceAlgo::Ring);
  // Its latency grows with log2 of the nodes: 512 single-device nodes at
  // 5 us pay 2 * 9 hops, the ring 2 * 511.
  ClusterSpec wide = uniformCluster(512, 1, 100, 5);
  EXPECT_NEAR(allReduceSeconds(wide, firstDevices(512), 1, AllReduceAlgo::Tree),
              2 * 9 * 5e-6, 1e-9);
  EXPECT_NEAR(allReduceSeconds(wide, firstDevices(512), 1), 2 * 511 * 5e-6,
              1e-9);
}

TEST(Collective, PaddedVersusGroupedAllGather) {
  ClusterSpec spec = uniformCluster(4, 1, 100, 5);
  std::vector<unsigned> group = firstDevices(4);
  // Skewed shards. Padded: 3 * (5e-6 + 4e8/12.5e9) = 0.096015.
  std::vector<double> skewed = {1e8, 2e8, 3e8, 4e8};
  EXPECT_NEAR(allGatherSeconds(spec, group, skewed, UnevenVariant::Padded),
              0.096015, 1e-9);
  // Grouped: the link into device 0 carries (1e9 - 1e8) / 0.8 bytes:
  // 3 * 5e-6 + 1.125e9/12.5e9 = 0.090015.
  EXPECT_NEAR(allGatherSeconds(spec, group, skewed, UnevenVariant::Grouped),
              0.090015, 1e-9);
  // Even shards: padded 3 * (5e-6 + 0.02) = 0.060015 beats grouped
  // 3 * 5e-6 + 7.5e8/0.8/12.5e9 = 0.075015.
  std::vector<double> even(4, 2.5e8);
  EXPECT_NEAR(allGatherSeconds(spec, group, even, UnevenVariant::Padded),
              0.060015, 1e-9);
  EXPECT_NEAR(allGatherSeconds(spec, group, even, UnevenVariant::Grouped),
              0.075015, 1e-9);
  // Reduce-scatter moves the same bytes.
  EXPECT_NEAR(reduceScatterSeconds(spec, group, skewed), 0.096015, 1e-9);
}

TEST(Collective, NicLoadTerm) {
  // 2 nodes x 2 devices, shards 1,1,2,2 (x1e8): node 0 receives 4e8 through
  // a 12.5 GB/s NIC = 0.032 s; node 1 receives 2e8.
  ClusterSpec spec = uniformCluster(2, 2, 100, 5);
  std::vector<double> shards = {1e8, 1e8, 2e8, 2e8};
  EXPECT_NEAR(nicLoadSeconds(spec, firstDevices(4), shards), 0.032, 1e-12);
  // Inside one node there is no NIC load.
  ClusterSpec one = uniformCluster(1, 4);
  EXPECT_EQ(nicLoadSeconds(one, firstDevices(4), shards), 0);
  // The all-gather can never beat it.
  for (UnevenVariant v : {UnevenVariant::Padded, UnevenVariant::Grouped})
    EXPECT_GE(allGatherSeconds(spec, firstDevices(4), shards, v), 0.032);
}

TEST(Collective, AllToAllBroadcastPointToPoint) {
  ClusterSpec spec = uniformCluster(4, 1, 100, 5);
  // All-to-all: 4e8 per device, 1e8 to each of 3 peers: each NIC sends
  // 3e8: 5e-6 + 3e8/12.5e9 = 0.024005.
  EXPECT_NEAR(allToAllSeconds(spec, firstDevices(4), {4e8, 4e8, 4e8, 4e8}),
              0.024005, 1e-9);
  // Broadcast of 1 GB pipelined over 3 links: 3 * 5e-6 + 1e9/12.5e9.
  EXPECT_NEAR(broadcastSeconds(spec, firstDevices(4), 0, 1e9), 0.080015, 1e-9);
  EXPECT_NEAR(pointToPointSeconds(spec, 0, 3, 1e9), 0.080005, 1e-9);
  ClusterSpec node = uniformCluster(1, 2, 100, 5, 100, 2);
  EXPECT_NEAR(pointToPointSeconds(node, 0, 1, 1e9), 0.010002, 1e-9);
  EXPECT_EQ(pointToPointSeconds(node, 1, 1, 1e9), 0);
}

TEST(Collective, LeafSpineUplinkIsABottleneck) {
  // 4 single-device nodes, two per leaf, 50 Gbit/s uplinks (6.25 GB/s),
  // 1 us spine latency. Ring all-reduce of 1 GB: chunk 2.5e8; links 1->2 and
  // 3->0 cross leaves, one per uplink: round = (5+1) us + 2.5e8/6.25e9;
  // 6 rounds = 0.240036.
  ClusterSpec spec = specFrom(R"(
defaults: {nic_bandwidth: 100 Gbit/s, nic_latency: 5 us}
topology:
  spine_latency: 1 us
  leaves:
    - {name: l0, uplink_bandwidth: 50 Gbit/s}
    - {name: l1, uplink_bandwidth: 50 Gbit/s}
nodes:
  - {name: a, count: 2, type: V100, devices: 1, leaf: l0}
  - {name: b, count: 2, type: V100, devices: 1, leaf: l1}
)");
  EXPECT_NEAR(allReduceSeconds(spec, firstDevices(4), 1e9), 0.240036, 1e-9);
  EXPECT_NEAR(linkLatency(spec, 0, 1), 5e-6, 1e-15);
  EXPECT_NEAR(linkLatency(spec, 1, 2), 6e-6, 1e-15);
}

TEST(Collective, TrivialGroupsCostNothing) {
  ClusterSpec spec = uniformCluster(2, 2);
  std::vector<unsigned> one = {3};
  EXPECT_EQ(allReduceSeconds(spec, one, 1e9), 0);
  EXPECT_EQ(allReduceSeconds(spec, one, 1e9, AllReduceAlgo::Hierarchical), 0);
  EXPECT_EQ(allGatherSeconds(spec, one, {1e9}), 0);
  EXPECT_EQ(broadcastSeconds(spec, one, 0, 1e9), 0);
  EXPECT_EQ(allReduceSeconds(spec, firstDevices(4), 0), 0);
}
