//===- CellTest.cpp - Multisets, job types, sub-clusters, enumeration -----===//

#include "weft/Cell/CellEstimator.h"
#include "weft/Cell/SubCluster.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::cell;

namespace {
/// 2 nodes of 2 V100 + 1 node of 4 T4.
const char *kCluster = R"yaml(
name: tiny-mixed
nodes:
  - name: v
    count: 2
    type: V100
    devices: 2
    intra_bandwidth: 150 GB/s
    nic_bandwidth: 100 Gbit/s
    nic_latency: 5 us
  - name: t
    type: T4
    devices: 4
    intra_bandwidth: 12 GB/s
    nic_bandwidth: 25 Gbit/s
)yaml";

ClusterSpec cluster() {
  auto spec = parseClusterSpec(kCluster, "tiny-mixed.yaml");
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return std::move(*spec);
}

std::string errorOf(llvm::Error err) { return llvm::toString(std::move(err)); }
} // namespace

TEST(Cell, MultisetText) {
  auto parsed = parseMultiset("4xT4+3xV100");
  ASSERT_TRUE(bool(parsed));
  EXPECT_EQ(formatMultiset(*parsed), "4xT4+3xV100");
  EXPECT_EQ(totalDevices(*parsed), 7u);
  auto other = parseMultiset("V100=3,T4=4");
  ASSERT_TRUE(bool(other));
  EXPECT_EQ(*other, *parsed);
  EXPECT_EQ(formatCell({*parsed, 2}), "4xT4+3xV100/S2");
  for (const char *bad : {"", "0xT4", "xT4", "3x", "T4=two"}) {
    auto wrong = parseMultiset(bad);
    EXPECT_FALSE(bool(wrong)) << bad;
    if (!wrong)
      llvm::consumeError(wrong.takeError());
  }
}

TEST(Cell, JobTypes) {
  auto bert = parseJobModel("bert:layers=2;hidden=64;heads=4;batch=32");
  ASSERT_TRUE(bool(bert)) << errorOf(bert.takeError());
  ASSERT_TRUE(bert->zoo.has_value());
  EXPECT_EQ(bert->zoo->layers, 2);
  EXPECT_EQ(bert->zoo->hidden, 64);
  EXPECT_EQ(bert->batch, 32);
  auto file = parseJobModel("models/net.onnx;batch=8");
  ASSERT_TRUE(bool(file));
  EXPECT_FALSE(file->zoo.has_value());
  EXPECT_EQ(file->path, "models/net.onnx");
  struct Bad {
    const char *type, *says;
  } bads[] = {{"bert:layers=2", "no batch"},
              {"bert;batch=0", "positive integer"},
              {"bert:layers=x;batch=4", "positive integer"},
              {"bert:image=32;batch=4", "has no option 'image'"},
              {"resnet;batch=4", "ONNX file"},
              {"net.onnx;layers=2;batch=4", "only batch"},
              {"bert:hidden=65;batch=4", "heads"}};
  for (const Bad &b : bads) {
    auto wrong = parseJobModel(b.type);
    ASSERT_FALSE(bool(wrong)) << b.type;
    EXPECT_NE(errorOf(wrong.takeError()).find(b.says), std::string::npos)
        << b.type;
  }
}

// 3 V100 in nodes of 2: one full node and one of 1 (no intra link); 4 T4 in
// its one node. Classes differ by node shape.
TEST(Cell, SubCluster) {
  ClusterSpec spec = cluster();
  auto sub = buildSubCluster(spec, {{"V100", 3}, {"T4", 4}});
  ASSERT_TRUE(bool(sub)) << errorOf(sub.takeError());
  EXPECT_EQ(sub->numDevices(), 7u);
  ASSERT_EQ(sub->nodes.size(), 3u);
  EXPECT_EQ(sub->nodes[0].deviceType, "T4");
  EXPECT_EQ(sub->nodes[0].numDevices, 4u);
  EXPECT_EQ(sub->nodes[1].numDevices, 2u);
  EXPECT_EQ(sub->nodes[2].numDevices, 1u);
  EXPECT_EQ(sub->nodes[2].intraBandwidthGBps, 0);
  EXPECT_EQ(sub->nodes[1].nicBandwidthGbps, 100);
  EXPECT_EQ(sub->classes.size(), 3u);
  EXPECT_EQ(sub->deviceTypes.size(), 2u);
  for (const Device &d : sub->devices)
    EXPECT_EQ(sub->typeOf(d.id).name, sub->nodes[d.node].deviceType);
  EXPECT_EQ(devicesOf(*sub), (DeviceMultiset{{"T4", 4}, {"V100", 3}}));
  // Bad input: a type the cluster lacks, more devices than it has.
  auto absent = buildSubCluster(spec, {{"A100", 1}});
  ASSERT_FALSE(bool(absent));
  EXPECT_NE(errorOf(absent.takeError()).find("no device type 'A100'"),
            std::string::npos);
  auto tooMany = buildSubCluster(spec, {{"V100", 5}});
  ASSERT_FALSE(bool(tooMany));
  EXPECT_NE(errorOf(tooMany.takeError()).find("has 4 V100"), std::string::npos);
}

// Counts per type: V100 {1, 2, 4}, T4 {1, 2, 4}: 15 multisets, 6 of one
// type; two stages need at least two nodes.
TEST(Cell, Enumerate) {
  ClusterSpec spec = cluster();
  EXPECT_EQ(enumerateCells(spec, 1, true).size(), 15u);
  std::vector<Cell> homogeneous = enumerateCells(spec, 1, false);
  EXPECT_EQ(homogeneous.size(), 6u);
  EXPECT_EQ(totalDevices(homogeneous.front().devices), 1u);
  std::vector<Cell> staged = enumerateCells(spec, 2, false);
  // Two-node Cells of one type: 4xV100 only.
  EXPECT_EQ(staged.size(), 7u);
}
