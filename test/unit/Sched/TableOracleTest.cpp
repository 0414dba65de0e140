//===- TableOracleTest.cpp - Gavel keys and the table oracle -------------===//

#include "TestOracle.h"
#include "weft/Sched/ClusterAdapter.h"

using namespace weft::sched;
using namespace weft::sched::test;

TEST(GavelKey, SplitsTypeAndScale) {
  auto key = parseGavelKey("('ResNet-18 (batch size 16)', 4)");
  ASSERT_TRUE(bool(key));
  EXPECT_EQ(key->first, "ResNet-18 (batch size 16)");
  EXPECT_EQ(key->second, 4u);
}

TEST(GavelKey, RejectsMalformedKeys) {
  for (const char *bad :
       {"ResNet, 1", "('A')", "('A', x)", "('A', 0)", "(A, 1)", "('A, 1)"}) {
    auto key = parseGavelKey(bad);
    EXPECT_FALSE(bool(key)) << bad;
    if (!key)
      EXPECT_NE(message(key.takeError()).find("key"), std::string::npos);
  }
}

TEST(TableOracle, LooksUpConsolidatedAndSpread) {
  auto oracle = tinyOracle();
  EXPECT_EQ(oracle->gpuTypes(), (std::vector<std::string>{"k80", "v100"}));
  EXPECT_EQ(oracle->counts("E"), (std::vector<unsigned>{1, 2, 4}));
  EXPECT_DOUBLE_EQ(*oracle->throughput("E", 2, "v100", true), 9.5);
  EXPECT_DOUBLE_EQ(*oracle->throughput("E", 2, "v100", false), 9.0);
  // No spread figures for k80: unknown, not zero.
  EXPECT_FALSE(oracle->throughput("E", 2, "k80", false).has_value());
  // One GPU is never spread.
  EXPECT_DOUBLE_EQ(*oracle->throughput("A", 1, "k80", false), 1.0);
  EXPECT_FALSE(oracle->throughput("Nope", 1, "v100", true).has_value());
  EXPECT_TRUE(oracle->counts("Nope").empty());
}

TEST(TableOracle, BadJsonNamesTheFile) {
  auto oracle = TableOracle::parse("{\"v100\": [1]}", "bad.json");
  ASSERT_FALSE(bool(oracle));
  std::string msg = message(oracle.takeError());
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
  auto broken = TableOracle::parse("{", "broken.json");
  ASSERT_FALSE(bool(broken));
  EXPECT_NE(message(broken.takeError()).find("invalid JSON"),
            std::string::npos);
  auto missing = TableOracle::load("/nonexistent/table.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(message(missing.takeError()).find("cannot read"),
            std::string::npos);
}

TEST(TableOracle, ReadsGavelSimulationTable) {
  auto oracle =
      TableOracle::load(WEFT_DATA_DIR "/gavel/simulation_throughputs.json");
  ASSERT_TRUE(bool(oracle)) << message(oracle.takeError());
  EXPECT_EQ((*oracle)->jobTypes().size(), 26u);
  EXPECT_EQ((*oracle)->gpuTypes(),
            (std::vector<std::string>{"k80", "p100", "v100"}));
  // Every job type runs on one GPU; ResNet-50 is faster on a V100.
  for (const std::string &type : (*oracle)->jobTypes())
    EXPECT_EQ((*oracle)->counts(type).front(), 1u) << type;
  const char *resnet = "ResNet-50 (batch size 64)";
  EXPECT_GT(*(*oracle)->throughput(resnet, 1, "v100", true),
            *(*oracle)->throughput(resnet, 1, "k80", true));
  // The profile for the network model: all-reduce bytes grow with count.
  auto p2 = (*oracle)->iterationProfile(resnet, 2, "v100");
  auto p8 = (*oracle)->iterationProfile(resnet, 8, "v100");
  ASSERT_TRUE(p2 && p8);
  EXPECT_LT(p2->bytesPerGpu, p8->bytesPerGpu);
  EXPECT_FALSE((*oracle)->iterationProfile(resnet, 1, "v100").has_value());
}

TEST(GpuEquivalence, MapsCatalogTypesOntoGavelTypes) {
  auto oracle = tinyOracle(); // knows k80 and v100
  auto same = mapGpuType("V100", "v100", 15.7, *oracle);
  ASSERT_TRUE(bool(same));
  EXPECT_EQ(same->first, "v100");
  EXPECT_DOUBLE_EQ(same->second, 1.0);
  auto variant = mapGpuType("V100M32", "", 15.7, *oracle);
  ASSERT_TRUE(bool(variant));
  EXPECT_EQ(variant->first, "v100");
  // A100: nearest anchor in log TFLOPS is the V100, scaled by 19.5/15.7.
  auto a100 = mapGpuType("A100", "", 19.5, *oracle);
  ASSERT_TRUE(bool(a100));
  EXPECT_EQ(a100->first, "v100");
  EXPECT_NEAR(a100->second, 19.5 / 15.7, 1e-12);
  // Factors are clamped to 2x.
  auto h100 = mapGpuType("H100", "", 67, *oracle);
  ASSERT_TRUE(bool(h100));
  EXPECT_DOUBLE_EQ(h100->second, 2.0);
  // T4 (8.1 TFLOPS) without a p100 anchor: nearest in log is k80 (4.4)
  // at 8.1/4.4 = 1.84 vs v100 at 0.52 -> |log 1.84| < |log 0.52|.
  auto t4 = mapGpuType("T4", "", 8.1, *oracle);
  ASSERT_TRUE(bool(t4));
  EXPECT_EQ(t4->first, "k80");
}
