//===- SpecErrorTest.cpp - Bad specs give one located message
//---------------===//

#include "weft/Cluster/ClusterSpec.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"

using namespace weft;

/// Parses `text` expecting failure; returns the message (and checks that the
/// error is bad input, exit code 1).
static std::string errorOf(llvm::StringRef text) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(text, "bad.yaml");
  if (spec) {
    ADD_FAILURE() << "spec was accepted";
    return "";
  }
  std::string message;
  llvm::handleAllErrors(
      spec.takeError(),
      [&](const WeftError &e) {
        EXPECT_EQ(e.getCode(), ExitBadInput);
        message = e.getMessage();
      },
      [&](const llvm::ErrorInfoBase &e) {
        ADD_FAILURE() << "not a WeftError";
        message = e.message();
      });
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  return message;
}

static const char *kNodeTail = "    devices: 8\n"
                               "    intra_bandwidth: 150 GB/s\n"
                               "    nic_bandwidth: 10 Gbit/s\n";

TEST(SpecErrors, UnknownDeviceTypeListsKnownOnes) {
  std::string msg = errorOf(std::string("nodes:\n"
                                        "  - name: a\n"
                                        "    type: V1000\n") +
                            kNodeTail);
  EXPECT_EQ(msg.rfind("bad.yaml:3:11: field 'type': unknown device type "
                      "'V1000' (known: K80, P100, V100",
                      0),
            0u)
      << msg;
}

TEST(SpecErrors, WrongUnit) {
  std::string msg = errorOf("nodes:\n"
                            "  - name: a\n"
                            "    type: V100\n"
                            "    devices: 8\n"
                            "    intra_bandwidth: 5 us\n");
  EXPECT_EQ(msg, "bad.yaml:5:22: field 'intra_bandwidth': wrong unit 'us': "
                 "expected a bandwidth such as '300 GB/s' or '10.4 "
                 "Gbit/s', found '5 us'");
}

TEST(SpecErrors, MissingUnit) {
  std::string msg = errorOf("defaults:\n"
                            "  nic_latency: 5\n"
                            "nodes:\n"
                            "  - {name: a, type: V100, devices: 1}\n");
  EXPECT_EQ(msg.rfind("bad.yaml:2:16: field 'nic_latency': missing unit", 0),
            0u)
      << msg;
}

TEST(SpecErrors, ZeroOrNegativeBandwidthMemoryCount) {
  EXPECT_NE(errorOf("nodes:\n"
                    "  - {name: a, type: V100, devices: 1,"
                    " nic_bandwidth: 0 Gbit/s}\n")
                .find("bad.yaml:2:54: field 'nic_bandwidth': expected a "
                      "positive bandwidth"),
            std::string::npos);
  EXPECT_NE(errorOf("device_types:\n"
                    "  - name: V100\n"
                    "    memory: -16 GB\n"
                    "nodes:\n"
                    "  - {name: a, type: V100, devices: 1}\n")
                .find("bad.yaml:3:13: field 'memory': expected a positive "
                      "memory size"),
            std::string::npos);
  std::string msg = errorOf("nodes:\n"
                            "  - name: a\n"
                            "    count: 0\n"
                            "    type: V100\n"
                            "    devices: 1\n");
  EXPECT_EQ(msg, "bad.yaml:3:12: field 'count': expected a positive integer, "
                 "found '0'");
  EXPECT_NE(errorOf("nodes:\n"
                    "  - {name: a, type: V100, devices: -2}\n")
                .find("field 'devices': expected a positive integer"),
            std::string::npos);
}

TEST(SpecErrors, NoDevices) {
  EXPECT_EQ(errorOf("nodes: []\n"),
            "bad.yaml:1:1: field 'nodes': the cluster has no devices");
  EXPECT_EQ(errorOf(""),
            "bad.yaml:1:1: field 'nodes': the cluster has no devices");
  EXPECT_EQ(errorOf("name: x\n"),
            "bad.yaml:1:1: field 'nodes': the cluster has no devices");
}

TEST(SpecErrors, DuplicateNodeNames) {
  std::string msg = errorOf("defaults: {nic_bandwidth: 10 Gbit/s}\n"
                            "nodes:\n"
                            "  - {name: a, count: 2, type: V100, devices: 1}\n"
                            "  - {name: a-1, type: V100, devices: 1}\n");
  EXPECT_EQ(msg, "bad.yaml:4:6: field 'name': duplicate node name 'a-1'");
}

TEST(SpecErrors, UnknownKey) {
  std::string msg = errorOf("nodes:\n"
                            "  - name: a\n"
                            "    type: V100\n"
                            "    devices: 1\n"
                            "    nic_bandwdith: 10 Gbit/s\n");
  EXPECT_EQ(msg, "bad.yaml:5:5: unknown key 'nic_bandwdith'");
  EXPECT_EQ(errorOf("nodez: []\n").rfind("bad.yaml:1:1: unknown key 'nodez'"),
            0u);
}

TEST(SpecErrors, CrossFieldRules) {
  EXPECT_NE(errorOf("nodes:\n"
                    "  - {name: a, type: V100, devices: 8}\n")
                .find("bad.yaml:2:6: node 'a' has 8 devices but no "
                      "'intra_bandwidth'"),
            std::string::npos);
  EXPECT_NE(errorOf("nodes:\n"
                    "  - {name: a, count: 2, type: V100, devices: 1}\n")
                .find("field 'nic_bandwidth': node 'a' has no NIC bandwidth"),
            std::string::npos);
  EXPECT_NE(errorOf("nodes:\n"
                    "  - {name: a, type: V100, devices: 1, leaf: l0}\n")
                .find("field 'leaf': leaf switch 'l0' given but the spec has "
                      "no 'topology' section"),
            std::string::npos);
  EXPECT_NE(errorOf("topology: {leaves: [{name: l0}]}\n"
                    "nodes:\n"
                    "  - {name: a, type: V100, devices: 1, leaf: l1}\n")
                .find("field 'leaf': unknown leaf switch 'l1' (known: l0)"),
            std::string::npos);
  EXPECT_NE(errorOf("device_types:\n"
                    "  - {name: X, fp32_peak: 1 TFLOPS}\n"
                    "nodes:\n"
                    "  - {name: a, type: X, devices: 1}\n")
                .find("bad.yaml:2:6: device type 'X' is not in the catalog"),
            std::string::npos);
  EXPECT_NE(errorOf("device_types:\n"
                    "  - {name: V100, efficiency: {matmul: 1.5}}\n"
                    "nodes:\n"
                    "  - {name: a, type: V100, devices: 1}\n")
                .find("field 'matmul': expected a fraction in (0, 1]"),
            std::string::npos);
}

TEST(SpecErrors, GarbageNeverCrashes) {
  const char *inputs[] = {
      "{{{{",
      "nodes: 7\n",
      "- a\n- b\n",
      "nodes:\n  - 3\n",
      "\"unterminated",
      "nodes: [{name: [1, 2]}]\n",
      "\t\tnodes:\n",
      "nodes:\n  - {name: a, type: V100, devices: 99999999999}\n",
      "nodes:\n  - {name: a, type: V100, devices: 1, nic_latency: 1e999 s}\n"};
  for (const char *text : inputs) {
    std::string msg = errorOf(text);
    EXPECT_EQ(msg.rfind("bad.yaml:", 0), 0u) << text << " → " << msg;
  }
}

TEST(SpecErrors, MissingFileIsBadInput) {
  llvm::Expected<ClusterSpec> spec = loadClusterSpec("/nonexistent/x.yaml");
  ASSERT_FALSE(static_cast<bool>(spec));
  std::string msg = llvm::toString(spec.takeError());
  EXPECT_NE(msg.find("/nonexistent/x.yaml: cannot read cluster spec"),
            std::string::npos);
}
