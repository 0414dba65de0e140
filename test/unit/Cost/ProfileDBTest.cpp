//===- ProfileDBTest.cpp - Measured figures: round trip and lookup
//----------===//

#include "weft/Cost/ProfileDB.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstdlib>
#include <set>

using namespace weft;

namespace {
ProfileDB sampleDB() {
  ProfileDB db;
  db.description = "test";
  // Matmul on the CPU pseudo-device: 1 ms at 1e8 FLOPs, 100 ms at 1e10.
  db.kernels.push_back(
      {"CPU", "linear", OpClass::Matmul, DType::FP32, 1e8, 1e6, 1e-3});
  db.kernels.push_back(
      {"CPU", "linear", OpClass::Matmul, DType::FP32, 1e10, 1e7, 1e-1});
  db.kernels.push_back(
      {"CPU", "gelu", OpClass::Elementwise, DType::FP32, 8e6, 8e6, 2e-3});
  db.collectives.push_back({"CPU", "all_reduce", 2, 1 << 20, 2e-3});
  db.collectives.push_back({"CPU", "all_reduce", 2, 1 << 24, 2e-2});
  return db;
}
} // namespace

TEST(ProfileDB, RoundTrip) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeProfileDB(sampleDB(), os);
  llvm::Expected<ProfileDB> db = parseProfileDB(os.str(), "db.json");
  ASSERT_TRUE(static_cast<bool>(db)) << llvm::toString(db.takeError());
  ASSERT_EQ(db->kernels.size(), 3u);
  ASSERT_EQ(db->collectives.size(), 2u);
  EXPECT_EQ(db->description, "test");
  EXPECT_EQ(db->kernels[2].kernel, "gelu");
  EXPECT_EQ(db->kernels[2].opClass, OpClass::Elementwise);
  EXPECT_EQ(db->kernels[1].flops, 1e10);
  EXPECT_EQ(db->kernels[1].seconds, 1e-1);
  EXPECT_EQ(db->collectives[1].devices, 2u);
  EXPECT_EQ(db->collectives[1].bytes, double(1 << 24));
}

TEST(ProfileDB, InterpolatesLogLog) {
  ProfileDB db = sampleDB();
  OpWork mm{OpClass::Matmul, 1e9, 0};
  // Half-way in log size between (1e8, 1e-3) and (1e10, 1e-1): 1e-2.
  EXPECT_NEAR(*db.kernelSeconds("CPU", DType::FP32, mm), 1e-2, 1e-12);
  // Exact sample, floor below, proportional above.
  mm.flops = 1e10;
  EXPECT_NEAR(*db.kernelSeconds("CPU", DType::FP32, mm), 1e-1, 1e-12);
  mm.flops = 1e6;
  EXPECT_NEAR(*db.kernelSeconds("CPU", DType::FP32, mm), 1e-3, 1e-12);
  mm.flops = 2e10;
  EXPECT_NEAR(*db.kernelSeconds("CPU", DType::FP32, mm), 2e-1, 1e-12);
  // Elementwise is keyed by bytes.
  OpWork gelu{OpClass::Elementwise, 1, 16e6};
  EXPECT_NEAR(*db.kernelSeconds("CPU", DType::FP32, gelu), 4e-3, 1e-12);
  // Other devices, dtypes and classes have no samples.
  EXPECT_FALSE(db.kernelSeconds("V100", DType::FP32, mm).has_value());
  EXPECT_FALSE(db.kernelSeconds("CPU", DType::BF16, mm).has_value());
  EXPECT_FALSE(db.kernelSeconds("CPU", DType::FP32, {OpClass::Conv, 1e9, 0}));
  EXPECT_NEAR(*db.collectiveSeconds("CPU", "all_reduce", 2, 1 << 22),
              std::sqrt(2e-3 * 2e-2), 1e-12);
  EXPECT_FALSE(db.collectiveSeconds("CPU", "all_reduce", 4, 1 << 22));
}

TEST(ProfileDB, OpTimePrefersMeasuredAndMarksIt) {
  ProfileDB db = sampleDB();
  const DeviceType &cpu = *lookupDeviceType("CPU");
  OpTime measured = opTime(cpu, DType::FP32, {OpClass::Matmul, 1e9, 0}, &db);
  EXPECT_TRUE(measured.measured);
  EXPECT_NEAR(measured.seconds, 1e-2, 1e-12);
  OpTime modelled = opTime(cpu, DType::FP32, {OpClass::Conv, 1e9, 0}, &db);
  EXPECT_FALSE(modelled.measured);
  EXPECT_NEAR(modelled.seconds, 1e9 / (0.1e12 * 0.6 * 0.875), 1e-12);
  EXPECT_FALSE(
      opTime(cpu, DType::FP32, {OpClass::Matmul, 1e9, 0}, nullptr).measured);
}

TEST(ProfileDB, BadFilesAreBadInput) {
  auto errorOf = [](llvm::StringRef text) {
    llvm::Expected<ProfileDB> db = parseProfileDB(text, "db.json");
    EXPECT_FALSE(static_cast<bool>(db));
    return db ? std::string() : llvm::toString(db.takeError());
  };
  EXPECT_NE(errorOf("{").find("db.json: not JSON"), std::string::npos);
  EXPECT_NE(errorOf("{\"format\": \"x\"}").find("not a profile DB"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"format": "weft-profile-db", "version": 9})")
                .find("unsupported profile DB version"),
            std::string::npos);
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 1, "kernels": [
        {"device": "CPU", "kernel": "k", "op_class": "matmul",
         "dtype": "fp32", "flops": 1, "bytes": 1, "seconds": -1}]})"),
            "db.json: kernels[0]: field 'seconds' must be a positive number");
  EXPECT_EQ(errorOf(R"({"format": "weft-profile-db", "version": 1, "kernels": [
        {"device": "CPU", "kernel": "k", "op_class": "matmull",
         "dtype": "fp32", "flops": 1, "bytes": 1, "seconds": 1}]})"),
            "db.json: kernels[0]: unknown op_class 'matmull'");
}

TEST(ProfileDB, WeftProfileWritesALoadableDB) {
  // Runs the real profiler on this machine's CPU (kernels only, quick).
  std::string python = WEFT_VENV_PYTHON;
  if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "no PyTorch at " << python
                 << " (scripts/install-deps.sh --python)";
  llvm::SmallString<128> path;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("weft-profile", "json", path));
  std::string command = python + " " + WEFT_SOURCE_DIR +
                        "/tools/weft-profile/weft-profile -o " +
                        path.str().str() +
                        " --quick --no-collectives --min-seconds 0.001 "
                        "--max-reps 3 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  llvm::Expected<ProfileDB> db = loadProfileDB(path);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(static_cast<bool>(db)) << llvm::toString(db.takeError());
  // Every kernel of the standard set, all on the CPU pseudo-device.
  std::set<std::string> kernels;
  for (const KernelSample &k : db->kernels) {
    EXPECT_EQ(k.device, "CPU");
    EXPECT_GT(k.seconds, 0);
    kernels.insert(k.kernel);
  }
  EXPECT_EQ(kernels,
            (std::set<std::string>{"conv2d", "embedding", "gelu", "layer_norm",
                                   "linear", "softmax"}));
  OpTime t = opTime(*lookupDeviceType("CPU"), DType::FP32,
                    {OpClass::Matmul, 1e8, 0}, &*db);
  EXPECT_TRUE(t.measured);
  EXPECT_GT(t.seconds, 0);
}
