//===- MonotonicityTest.cpp - Faster hardware is never slower
//--------------===//

#include "TestSpecs.h"
#include "weft/Cost/Collective.h"
#include "weft/Cost/OpCost.h"

using namespace weft;
using namespace weft::test;

namespace {
/// Every collective on `group` of `spec` with fixed uneven shards.
std::vector<double> allCollectives(const ClusterSpec &spec) {
  std::vector<unsigned> group = firstDevices(spec.numDevices());
  std::vector<double> shards;
  for (unsigned i = 0; i < group.size(); ++i)
    shards.push_back(1e7 * (1 + i % 3));
  return {
      allReduceSeconds(spec, group, 3e8, AllReduceAlgo::Ring),
      allReduceSeconds(spec, group, 3e8, AllReduceAlgo::Hierarchical),
      allGatherSeconds(spec, group, shards, UnevenVariant::Padded),
      allGatherSeconds(spec, group, shards, UnevenVariant::Grouped),
      reduceScatterSeconds(spec, group, shards, UnevenVariant::Grouped),
      allToAllSeconds(spec, group, shards),
      broadcastSeconds(spec, group, 1, 3e8),
      pointToPointSeconds(spec, 0, group.back(), 3e8),
      nicLoadSeconds(spec, group, shards),
  };
}

void expectNoSlower(const std::vector<double> &faster,
                    const std::vector<double> &slower, const char *what) {
  ASSERT_EQ(faster.size(), slower.size());
  for (unsigned i = 0; i < faster.size(); ++i)
    EXPECT_LE(faster[i], slower[i]) << what << ", collective #" << i;
}
} // namespace

TEST(Monotonicity, MoreBandwidthOrLessLatencyIsNeverSlower) {
  ClusterSpec base = uniformCluster(3, 4, /*nic=*/25, /*nicUs=*/20,
                                    /*intra=*/12, /*intraUs=*/5);
  std::vector<double> t = allCollectives(base);
  for (double x : t)
    EXPECT_GT(x, 0);
  expectNoSlower(allCollectives(uniformCluster(3, 4, 100, 20, 12, 5)), t,
                 "faster NIC");
  expectNoSlower(allCollectives(uniformCluster(3, 4, 25, 20, 300, 5)), t,
                 "faster intra-node link");
  expectNoSlower(allCollectives(uniformCluster(3, 4, 25, 2, 12, 5)), t,
                 "lower NIC latency");
  expectNoSlower(allCollectives(uniformCluster(3, 4, 25, 20, 12, 1)), t,
                 "lower intra-node latency");
  // Strictly faster where the NIC is the bottleneck.
  EXPECT_LT(allCollectives(uniformCluster(3, 4, 100, 20, 12, 5))[0], t[0]);
}

TEST(Monotonicity, LessOversubscriptionIsNeverSlower) {
  auto spec = [](const char *oversubscription) {
    return specFrom(std::string(R"(
defaults: {nic_bandwidth: 100 Gbit/s, nic_latency: 5 us,
           intra_bandwidth: 100 GB/s}
nodes:
  - {name: n, count: 6, type: A100, devices: 2}
topology:
  nodes_per_leaf: 2
  oversubscription: )") +
                    oversubscription + "\n");
  };
  expectNoSlower(allCollectives(spec("1")), allCollectives(spec("4")),
                 "less oversubscribed");
  // The ring crosses leaves, so 4:1 is strictly slower than 1:1.
  EXPECT_LT(allCollectives(spec("1"))[0], allCollectives(spec("4"))[0]);
}

TEST(Monotonicity, FasterDeviceIsNeverSlower) {
  // Catalog generations, slowest first.
  const char *order[] = {"K80", "P100", "V100", "A100", "H100"};
  std::vector<OpWork> works;
  for (unsigned c = 0; c < kNumOpClasses; ++c)
    for (double flops : {1e6, 1e9, 1e12})
      for (double bytes : {1e3, 1e6, 1e9})
        works.push_back({static_cast<OpClass>(c), flops, bytes});
  for (unsigned i = 0; i + 1 < std::size(order); ++i) {
    const DeviceType &slow = *lookupDeviceType(order[i]);
    const DeviceType &fast = *lookupDeviceType(order[i + 1]);
    for (DType d : {DType::FP32, DType::BF16, DType::FP16})
      for (const OpWork &w : works)
        EXPECT_LE(rooflineTime(fast, d, w).seconds,
                  rooflineTime(slow, d, w).seconds)
            << fast.name << " vs " << slow.name << " " << toString(d).str()
            << " " << toString(w.opClass).str();
  }
  // Scaling any figure of one type up never slows an op.
  DeviceType base = *lookupDeviceType("T4");
  for (unsigned field = 0; field < 4; ++field) {
    DeviceType better = base;
    double *figures[] = {&better.fp32Tflops, &better.fp16Tflops,
                         &better.bf16Tflops, &better.memBandwidthGBps};
    *figures[field] *= 2;
    for (DType d : {DType::FP32, DType::BF16, DType::FP16})
      for (const OpWork &w : works)
        EXPECT_LE(rooflineTime(better, d, w).seconds,
                  rooflineTime(base, d, w).seconds);
  }
}
