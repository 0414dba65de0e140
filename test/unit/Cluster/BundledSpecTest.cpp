//===- BundledSpecTest.cpp - Every spec in examples/clusters loads
//----------===//

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace weft;

static std::string bundled(llvm::StringRef name) {
  return (llvm::Twine(WEFT_SOURCE_DIR) + "/examples/clusters/" + name).str();
}

static ClusterSpec load(llvm::StringRef name) {
  llvm::Expected<ClusterSpec> spec = loadClusterSpec(bundled(name));
  if (!spec) {
    ADD_FAILURE() << name.str() << ": " << llvm::toString(spec.takeError());
    return ClusterSpec();
  }
  return std::move(*spec);
}

TEST(BundledSpecs, EveryFileLoadsAndPrints) {
  std::error_code ec;
  unsigned count = 0;
  for (llvm::sys::fs::directory_iterator it(bundled(""), ec), end;
       it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".yaml")
      continue;
    ++count;
    llvm::Expected<ClusterSpec> spec = loadClusterSpec(it->path());
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
    EXPECT_GT(spec->numDevices(), 0u) << it->path();
    std::string text;
    llvm::raw_string_ostream os(text);
    printClusterSummary(*spec, os);
    EXPECT_NE(os.str().find("TFLOPS"), std::string::npos);
  }
  EXPECT_FALSE(ec);
  EXPECT_GE(count, 9u);
}

TEST(BundledSpecs, Hap) {
  ClusterSpec hap = load("hap-64.yaml");
  EXPECT_EQ(hap.numDevices(), 64u);
  EXPECT_EQ(hap.numNodes(), 8u);
  EXPECT_EQ(hap.gpuCountsByType()["V100"], 16u);
  EXPECT_EQ(hap.gpuCountsByType()["P100"], 48u);
  EXPECT_EQ(hap.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(hap.nodes[0].nicBandwidthGbps, 10.4);
  EXPECT_EQ(hap.nodes[1].name, "v100-node-1");
  EXPECT_NEAR(hap.totalPeakFlops(DType::FP32), 16 * 15.7e12 + 48 * 10.6e12,
              1e6);
  unsigned sizes[] = {8, 16, 32};
  const char *files[] = {"hap-8.yaml", "hap-16.yaml", "hap-32.yaml"};
  for (unsigned i = 0; i < 3; ++i) {
    ClusterSpec sub = load(files[i]);
    EXPECT_EQ(sub.numDevices(), sizes[i]) << files[i];
    EXPECT_EQ(sub.numNodes(), 8u) << files[i];
    EXPECT_EQ(sub.classes.size(), 2u) << files[i];
  }
}

TEST(BundledSpecs, Mixed) {
  ClusterSpec mixed = load("mixed-a100-v100-t4.yaml");
  EXPECT_EQ(mixed.numDevices(), 80u);
  EXPECT_EQ(mixed.classes.size(), 3u);
  ClusterSpec big = load("mixed-256.yaml");
  EXPECT_EQ(big.numDevices(), 256u);
  EXPECT_EQ(big.gpuCountsByType().size(), 3u);
  EXPECT_EQ(big.topology.leaves.size(), 6u); // 44 nodes, 8 per leaf
  EXPECT_DOUBLE_EQ(big.topology.leaves[0].oversubscription, 2);
  EXPECT_DOUBLE_EQ(big.topology.leaves[0].uplinkBandwidthGbps, 800);
  ClusterSpec a100 = load("a100-8x8.yaml");
  EXPECT_EQ(a100.numDevices(), 64u);
  EXPECT_EQ(a100.classes.size(), 1u);
}

TEST(BundledSpecs, GavelNamesMatchGavelWorkerTypes) {
  ClusterSpec gavel = load("gavel-108.yaml");
  EXPECT_EQ(gavel.numDevices(), 108u);
  auto counts = gavel.gpuCountsByGavelName();
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts["v100"], 36u);
  EXPECT_EQ(counts["p100"], 36u);
  EXPECT_EQ(counts["k80"], 36u);
}

TEST(BundledSpecs, AlibabaMatchesTraceShape) {
  // docs/Setups.md: 1213 GPU nodes, 6212 GPUs of 7 types.
  ClusterSpec ali = load("alibaba-2023.yaml");
  EXPECT_EQ(ali.numNodes(), 1213u);
  EXPECT_EQ(ali.numDevices(), 6212u);
  auto counts = ali.gpuCountsByType();
  EXPECT_EQ(counts.size(), 7u);
  EXPECT_EQ(counts["G2"], 4392u);
  EXPECT_FALSE(ali.topology.empty());
  EXPECT_EQ(ali.topology.leaves.size(), 38u); // ceil(1213 / 32)
}

TEST(BundledSpecs, AlibabaAgreesWithTheTraceFile) {
  // data/alibaba-gpu-2023/gpu-counts.csv holds the trace's per-model node and
  // GPU counts (data/alibaba-gpu-2023/PROVENANCE.txt).
  std::string csv =
      std::string(WEFT_SOURCE_DIR) + "/data/alibaba-gpu-2023/gpu-counts.csv";
  auto buffer = llvm::MemoryBuffer::getFile(csv);
  ASSERT_TRUE(bool(buffer)) << "cannot read " << csv;
  std::map<std::string, unsigned> gpus, nodes;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front()) {
    llvm::SmallVector<llvm::StringRef> cols;
    line.trim().split(cols, ',');
    ASSERT_EQ(cols.size(), 3u) << line.str();
    unsigned n = 0, g = 0;
    ASSERT_FALSE(cols[1].getAsInteger(10, n));
    ASSERT_FALSE(cols[2].getAsInteger(10, g));
    gpus[cols[0].str()] = g;
    nodes[cols[0].str()] = n;
  }
  ASSERT_EQ(gpus.size(), 7u);
  ClusterSpec ali = load("alibaba-2023.yaml");
  EXPECT_EQ(ali.gpuCountsByType(), gpus);
  std::map<std::string, unsigned> specNodes;
  for (const Node &n : ali.nodes)
    specNodes[n.deviceType] += 1;
  EXPECT_EQ(specNodes, nodes);
}
