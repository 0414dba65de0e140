//===- AllPairsRoundTest.cpp - All-to-all rounds per node, bit for bit ----===//
//
// allPairsRoundSeconds prices an all-to-all from its members per node and
// per leaf; it must equal roundSeconds of the round's n² transfers exactly
// (plans on large clusters must not change with the faster pricing).
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"
#include "weft/Cost/Collective.h"
#include "weft/Cost/Network.h"
#include <random>

using namespace weft;
using namespace weft::test;

namespace {
/// Nodes of 1, 2, 4 and 8 devices of two NICs under leaves of 3 nodes.
const char *kMixed = R"(name: mixed
defaults: {intra_bandwidth: 12 GB/s, intra_latency: 5 us,
           nic_bandwidth: 25 Gbit/s, nic_latency: 20 us}
topology: {spines: 2, spine_latency: 2 us, nodes_per_leaf: 3,
           oversubscription: 3}
nodes:
  - {name: a, count: 2, type: V100, devices: 8}
  - {name: b, count: 3, type: T4, devices: 2, nic_latency: 30 us}
  - {name: c, count: 2, type: P100, devices: 1, nic_bandwidth: 10 Gbit/s}
  - {name: d, count: 2, type: A100, devices: 4}
)";

/// roundSeconds of the materialised round.
double enumerated(const ClusterSpec &spec, llvm::ArrayRef<unsigned> group,
                  llvm::ArrayRef<double> bytes) {
  std::vector<Transfer> round;
  unsigned n = group.size();
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < n; ++j)
      if (i != j)
        round.push_back({group[i], group[j], bytes[i] / n});
  return roundSeconds(spec, round);
}
} // namespace

TEST(AllPairsRound, EqualsTheEnumeratedRoundBitForBit) {
  ClusterSpec spec = specFrom(kMixed);
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial < 200; ++trial) {
    // A random subset in random order, random bytes (some zero, some
    // equal, some of odd magnitudes so that repeated sums round).
    std::vector<unsigned> all = firstDevices(spec.numDevices());
    std::shuffle(all.begin(), all.end(), rng);
    unsigned n = 1 + rng() % spec.numDevices();
    std::vector<unsigned> group(all.begin(), all.begin() + n);
    if (trial % 3 == 0)
      std::sort(group.begin(), group.end());
    std::vector<double> bytes;
    for (unsigned i = 0; i < n; ++i) {
      unsigned kind = rng() % 4;
      bytes.push_back(kind == 0   ? 0.0
                      : kind == 1 ? 4096.0
                                  : std::ldexp(double(rng()), -7) / 3);
    }
    double fast = allPairsRoundSeconds(spec, group, bytes);
    EXPECT_EQ(fast, enumerated(spec, group, bytes)) << "trial " << trial;
    EXPECT_EQ(allToAllSeconds(spec, group, bytes), fast);
  }
}

TEST(AllPairsRound, WithoutTopologyAndWithRepeatedDevices) {
  ClusterSpec spec = uniformCluster(3, 4, 100, 5, 100, 2);
  std::vector<unsigned> group = firstDevices(12);
  std::vector<double> bytes(12, 1e6 / 7);
  bytes[3] = 0;
  EXPECT_EQ(allPairsRoundSeconds(spec, group, bytes),
            enumerated(spec, group, bytes));
  // A repeated device sends nothing to itself (the enumerated fallback).
  group[5] = group[4];
  EXPECT_EQ(allPairsRoundSeconds(spec, group, bytes),
            enumerated(spec, group, bytes));
  EXPECT_EQ(allPairsRoundSeconds(spec, {}, {}), 0.0);
}

TEST(AllPairsRound, LongRunsOfEqualAdditions) {
  // 1,600 devices: each NIC load is one member's bytes added ~1,600 times
  // over, taken in runs per binade; still equal to the enumerated round.
  ClusterSpec spec = uniformCluster(200, 8, 100, 5, 100, 2);
  std::vector<unsigned> group = firstDevices(1600);
  std::mt19937 rng(11);
  for (double scale : {1.0, 1e6 / 3, 1e9 / 7, 0x1p-30}) {
    std::vector<double> bytes;
    for (unsigned i = 0; i < group.size(); ++i)
      bytes.push_back(scale * (1 + rng() % 5) / 3);
    EXPECT_EQ(allPairsRoundSeconds(spec, group, bytes),
              enumerated(spec, group, bytes))
        << "scale " << scale;
  }
}
