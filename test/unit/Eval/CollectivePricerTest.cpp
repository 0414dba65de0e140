//===- CollectivePricerTest.cpp - Measured collectives by group type ------===//
//
// A profile DB's collective samples are keyed by the group's device type;
// a group of several types is keyed by their names joined with '+' (what
// weft-profile --in-situ writes for ranks of several classes).
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/CollectivePricer.h"
#include "EvalTestUtil.h"
#include <gtest/gtest.h>

using namespace weft;
using spmd::Collective;

namespace {

ClusterSpec toyCluster() {
  llvm::Expected<ClusterSpec> spec =
      parseClusterSpec(test::kToyCluster, "toy.yaml");
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return std::move(*spec);
}

ProfileDB dbWith(llvm::StringRef device) {
  std::string text = R"({"format": "weft-profile-db", "version": 2,
    "description": "test", "kernels": [], "ops": [],
    "collectives": [
      {"device": ")" +
                     device.str() +
                     R"(", "collective": "all_gather", "devices": 2,
       "bytes": 1024, "seconds": 0.003, "source": "program"},
      {"device": ")" +
                     device.str() +
                     R"(", "collective": "all_gather", "devices": 2,
       "bytes": 4096, "seconds": 0.006, "source": "program"}]})";
  llvm::Expected<ProfileDB> db = parseProfileDB(text, "db.json");
  EXPECT_TRUE(bool(db)) << llvm::toString(db.takeError());
  return std::move(*db);
}

TEST(CollectivePricerTest, GroupTypeNameSortsDistinctTypes) {
  ClusterSpec spec = toyCluster();
  EXPECT_EQ(groupTypeName(spec, {0}), "Fast");
  EXPECT_EQ(groupTypeName(spec, {1, 0}), "Fast+Slow");
  EXPECT_EQ(groupTypeName(spec, {0, 1}), "Fast+Slow");
}

TEST(CollectivePricerTest, MixedGroupUsesItsSamples) {
  ClusterSpec spec = toyCluster();
  double shard[] = {1024, 1024};
  // Without a sample for the mixed group: the link model (2 KiB over
  // 1e9 B/s plus latency, far below a millisecond).
  ProfileDB other = dbWith("Fast");
  CollectivePricer linkOnly(spec, &other, {});
  double modelled = linkOnly.seconds(Collective::AllGather, {0, 1}, shard);
  EXPECT_GT(modelled, 0);
  EXPECT_LT(modelled, 1e-3);
  // With one: the measured time at that size, and interpolated between.
  ProfileDB mixed = dbWith("Fast+Slow");
  CollectivePricer measured(spec, &mixed, {});
  EXPECT_DOUBLE_EQ(measured.seconds(Collective::AllGather, {0, 1}, shard),
                   0.003);
  double mid[] = {2048, 2048};
  double t = measured.seconds(Collective::AllGather, {0, 1}, mid);
  EXPECT_GT(t, 0.003);
  EXPECT_LT(t, 0.006);
}

} // namespace
