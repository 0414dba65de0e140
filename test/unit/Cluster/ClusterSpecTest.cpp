//===- ClusterSpecTest.cpp - Parsing valid specs
//----------------------------===//

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace weft;

static ClusterSpec parse(llvm::StringRef text) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(text, "test.yaml");
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return ClusterSpec();
  }
  return std::move(*spec);
}

TEST(ClusterSpec, CountExpandsNodesAndDevicesAreDense) {
  ClusterSpec spec = parse(R"(
nodes:
  - {name: a, count: 2, type: V100, devices: 2, intra_bandwidth: 150 GB/s,
     intra_latency: 5 us, nic_bandwidth: 100 Gbit/s, nic_latency: 5 us}
  - {name: b, type: P100, devices: 1, nic_bandwidth: 100 Gbit/s}
)");
  ASSERT_EQ(spec.numNodes(), 3u);
  EXPECT_EQ(spec.name, "test");
  EXPECT_EQ(spec.nodes[0].name, "a-0");
  EXPECT_EQ(spec.nodes[1].name, "a-1");
  EXPECT_EQ(spec.nodes[2].name, "b");
  ASSERT_EQ(spec.numDevices(), 5u);
  EXPECT_EQ(spec.devices[3].node, 1u);
  EXPECT_EQ(spec.devices[3].localRank, 1u);
  EXPECT_EQ(spec.nodes[2].firstDevice, 4u);
  EXPECT_EQ(spec.typeOf(4).name, "P100");
  EXPECT_EQ(spec.nodeOf(2).name, "a-1");
  EXPECT_DOUBLE_EQ(spec.nodes[0].intraBandwidth(), 150e9);
  EXPECT_DOUBLE_EQ(spec.nodes[0].nicBandwidth(), 12.5e9);
  EXPECT_DOUBLE_EQ(spec.nodes[0].nicLatency(), 5e-6);
  EXPECT_EQ(spec.deviceTypes.size(), 2u);
}

TEST(ClusterSpec, ClassesGroupSameTypeShapeAndLinks) {
  ClusterSpec spec = parse(R"(
defaults: {intra_bandwidth: 150 GB/s, nic_bandwidth: 10 Gbit/s}
nodes:
  - {name: a, count: 2, type: V100, devices: 4}
  - {name: b, type: V100, devices: 2}
  - {name: c, type: V100, devices: 4, nic_bandwidth: 100 Gbit/s}
  - {name: d, type: V100, devices: 4}
)");
  ASSERT_EQ(spec.classes.size(), 3u);
  EXPECT_EQ(spec.classes[0].devices.size(), 12u); // a-0, a-1, d
  EXPECT_EQ(spec.classes[0].nodes, (std::vector<unsigned>{0, 1, 4}));
  EXPECT_EQ(spec.classes[1].devicesPerNode, 2u);
  EXPECT_DOUBLE_EQ(spec.classes[2].nicBandwidthGbps, 100);
  EXPECT_EQ(spec.classOf(spec.nodes[4].firstDevice).id, 0u);
  for (const Device &d : spec.devices)
    EXPECT_EQ(spec.classes[d.deviceClass].typeIndex,
              spec.nodes[d.node].typeIndex);
}

TEST(ClusterSpec, OverridesAndNewTypes) {
  ClusterSpec spec = parse(R"(
device_types:
  - name: V100
    memory: 32 GB
    efficiency: {matmul: 0.5}
  - name: V100-PCIe
    base: V100
    fp32_peak: 14 TFLOPS
  - name: MyAccel
    fp32_peak: 50 TFLOPS
    memory: 64 GB
    memory_bandwidth: 2 TB/s
    gavel_name: accel
nodes:
  - {name: a, type: V100, devices: 1, nic_bandwidth: 10 Gbit/s}
  - {name: b, type: V100-PCIe, devices: 1, nic_bandwidth: 10 Gbit/s}
  - {name: c, type: MyAccel, devices: 1, nic_bandwidth: 10 Gbit/s}
)");
  const DeviceType *v100 = spec.findType("V100");
  ASSERT_NE(v100, nullptr);
  EXPECT_DOUBLE_EQ(v100->memoryGB, 32);
  EXPECT_DOUBLE_EQ(v100->fp32Tflops, 15.7);
  EXPECT_DOUBLE_EQ(v100->efficiency.get(OpClass::Matmul, DType::FP32), 0.5);
  const DeviceType *pcie = spec.findType("V100-PCIe");
  ASSERT_NE(pcie, nullptr);
  EXPECT_DOUBLE_EQ(pcie->fp32Tflops, 14);
  EXPECT_DOUBLE_EQ(pcie->memoryGB, 32); // base is the overridden V100
  const DeviceType *mine = spec.findType("MyAccel");
  ASSERT_NE(mine, nullptr);
  EXPECT_DOUBLE_EQ(mine->memBandwidthGBps, 2000);
  EXPECT_DOUBLE_EQ(mine->peakFlops(DType::FP16), 50e12);
  EXPECT_EQ(mine->gavelName, "accel");
  // A catalog name in another case still finds the spec's override.
  ClusterSpec lower = parse(R"(
device_types: [{name: V100, memory: 32 GB}]
nodes: [{name: a, type: v100, devices: 1}]
)");
  EXPECT_DOUBLE_EQ(lower.typeOf(0).memoryGB, 32);
  // The catalog itself is unchanged.
  EXPECT_DOUBLE_EQ(lookupDeviceType("V100")->memoryGB, 16);
}

TEST(ClusterSpec, ExplicitLeafSpineTopology) {
  ClusterSpec spec = parse(R"(
defaults: {nic_bandwidth: 100 Gbit/s}
topology:
  spines: 2
  leaves:
    - {name: l0, uplink_bandwidth: 100 Gbit/s}
    - {name: l1, oversubscription: 4}
nodes:
  - {name: a, count: 2, type: T4, devices: 1, leaf: l0}
  - {name: b, count: 4, type: T4, devices: 1, leaf: l1}
)");
  ASSERT_EQ(spec.topology.leaves.size(), 2u);
  EXPECT_EQ(spec.topology.numSpines, 2u);
  EXPECT_DOUBLE_EQ(spec.topology.leaves[0].oversubscription, 2);
  EXPECT_DOUBLE_EQ(spec.topology.leaves[1].uplinkBandwidthGbps, 100);
  EXPECT_EQ(spec.topology.leaves[1].nodes.size(), 4u);
  EXPECT_EQ(spec.nodes[3].leafIndex, 1);
  // Leaves do not split classes.
  EXPECT_EQ(spec.classes.size(), 1u);
}

TEST(ClusterSpec, KeyOrderDoesNotMatter) {
  ClusterSpec spec = parse(R"(
nodes:
  - {name: a, type: Mine, devices: 1}
device_types:
  - {name: Mine, base: T4}
)");
  EXPECT_EQ(spec.typeOf(0).name, "Mine");
  EXPECT_DOUBLE_EQ(spec.typeOf(0).fp32Tflops, 8.1);
}

TEST(ClusterSpec, SummaryHasUnits) {
  ClusterSpec spec = parse(R"(
name: tiny
nodes:
  - {name: a, type: V100, devices: 2, intra_bandwidth: 150 GB/s}
)");
  std::string text;
  llvm::raw_string_ostream os(text);
  printClusterSummary(spec, os);
  EXPECT_NE(text.find("cluster 'tiny': 2 devices on 1 nodes"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fp32 31.4 TFLOPS"), std::string::npos) << text;
  EXPECT_NE(text.find("GB/s"), std::string::npos);
}
