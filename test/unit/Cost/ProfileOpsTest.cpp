//===- ProfileOpsTest.cpp - Profile DB version 2: op samples, overhead ----===//

#include "weft/Cost/ProfileDB.h"
#include "gtest/gtest.h"

using namespace weft;

namespace {
constexpr llvm::StringLiteral kKey = "matmul [64,256][256,1024]->[64,1024]";

ProfileDB opDB() {
  ProfileDB db;
  db.addOp({"CPU", DType::FP32, kKey.str(), 2e-4, 5e-4});
  db.opOverheadSeconds["CPU"] = 1e-5;
  db.kernels.push_back(
      {"CPU", "gelu", OpClass::Elementwise, DType::FP32, 8e6, 8e6, 2e-3});
  return db;
}

std::string errorOf(llvm::StringRef text) {
  auto db = parseProfileDB(text, "db.json");
  return db ? "" : llvm::toString(db.takeError());
}
} // namespace

TEST(ProfileOps, RoundTripVersion2) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeProfileDB(opDB(), os);
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos);
  auto db = parseProfileDB(os.str(), "db.json");
  ASSERT_TRUE(static_cast<bool>(db)) << llvm::toString(db.takeError());
  ASSERT_EQ(db->ops().size(), 1u);
  EXPECT_EQ(db->ops()[0].key, kKey);
  EXPECT_EQ(db->ops()[0].backwardSeconds, 5e-4);
  EXPECT_EQ(db->opOverhead("CPU"), 1e-5);
  EXPECT_EQ(db->opOverhead("V100"), 0);
}

TEST(ProfileOps, LaterSampleReplacesKey) {
  ProfileDB db = opDB();
  db.addOp({"CPU", DType::FP32, kKey.str(), 3e-4, 6e-4});
  ASSERT_EQ(db.ops().size(), 1u);
  OpWork w{OpClass::Matmul, 1, 1, kKey.str()};
  EXPECT_EQ(*db.opSeconds("CPU", DType::FP32, w), 3e-4);
}

TEST(ProfileOps, OpSampleWinsThenKernelPlusOverheadThenRoofline) {
  ProfileDB db = opDB();
  const DeviceType &cpu = *lookupDeviceType("CPU");
  // The key's own sample, forward and backward, overhead included.
  OpWork fwd{OpClass::Matmul, 2.0 * 64 * 256 * 1024, 1e6, kKey.str()};
  OpWork bwd = fwd;
  bwd.backward = true;
  OpTime t = opTime(cpu, DType::FP32, fwd, &db);
  EXPECT_TRUE(t.measured);
  EXPECT_EQ(t.seconds, 2e-4);
  EXPECT_EQ(opTime(cpu, DType::FP32, bwd, &db).seconds, 5e-4);
  // Another shape: no sample of the key, no matmul kernels: roofline plus
  // the op overhead, not marked measured.
  OpWork other = fwd;
  other.key = "matmul [32,256][256,1024]->[32,1024]";
  OpTime r = opTime(cpu, DType::FP32, other, &db);
  EXPECT_FALSE(r.measured);
  EXPECT_NEAR(r.seconds, rooflineTime(cpu, DType::FP32, other).seconds + 1e-5,
              1e-15);
  // Elementwise work without a key: the kernel sample plus the overhead.
  OpWork gelu{OpClass::Elementwise, 8e6, 8e6};
  OpTime k = opTime(cpu, DType::FP32, gelu, &db);
  EXPECT_TRUE(k.measured);
  EXPECT_NEAR(k.seconds, 2e-3 + 1e-5, 1e-15);
  // Another dtype does not take the fp32 sample.
  EXPECT_FALSE(db.opSeconds("CPU", DType::BF16, fwd).has_value());
}

TEST(ProfileOps, ReadsVersion1WithoutOps) {
  auto db = parseProfileDB(R"({"format": "weft-profile-db", "version": 1,
    "kernels": [], "ops": [{"oops": 1}], "op_overhead_seconds": {"CPU": -1}})",
                           "db.json");
  ASSERT_TRUE(static_cast<bool>(db)) << llvm::toString(db.takeError());
  EXPECT_TRUE(db->ops().empty());
  EXPECT_EQ(db->opOverhead("CPU"), 0);
}

TEST(ProfileOps, BadVersion2Entries) {
  EXPECT_NE(errorOf(R"({"format": "weft-profile-db", "version": 3})")
                .find("unsupported profile DB version (expected 1 to 2)"),
            std::string::npos);
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 2, "ops": [
    {"device": "CPU", "dtype": "fp32", "forward_seconds": 1,
     "backward_seconds": 0}]})"),
            "db.json: ops[0]: field 'key' must be a string");
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 2, "ops": [
    {"device": "CPU", "dtype": "fp32", "key": "relu [4]->[4]",
     "forward_seconds": 0, "backward_seconds": 0}]})"),
            "db.json: ops[0]: field 'forward_seconds' must be a positive "
            "number");
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 2, "ops": [
    {"device": "CPU", "dtype": "fp99", "key": "relu [4]->[4]",
     "forward_seconds": 1, "backward_seconds": 0}]})"),
            "db.json: ops[0]: unknown dtype 'fp99'");
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 2,
    "op_overhead_seconds": {"CPU": -1}})"),
            "db.json: op_overhead_seconds.CPU must be a number >= 0");
}

TEST(ProfileOps, GradientSyncOverlap) {
  auto db = parseProfileDB(R"({"format": "weft-profile-db", "version": 2,
    "gradient_sync_overlap": false})",
                           "db.json");
  ASSERT_TRUE(static_cast<bool>(db)) << llvm::toString(db.takeError());
  EXPECT_EQ(db->gradientSyncOverlap, false);
  EXPECT_FALSE(overlapsGradientSync(true, &*db));
  EXPECT_TRUE(overlapsGradientSync(true, nullptr));
  EXPECT_FALSE(overlapsGradientSync(false, nullptr));
  ProfileDB unknown;
  EXPECT_TRUE(overlapsGradientSync(true, &unknown));
  std::string text;
  llvm::raw_string_ostream os(text);
  writeProfileDB(*db, os);
  EXPECT_NE(text.find("\"gradient_sync_overlap\": false"), std::string::npos);
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 2,
    "gradient_sync_overlap": 0})"),
            "db.json: gradient_sync_overlap must be true or false");
}
