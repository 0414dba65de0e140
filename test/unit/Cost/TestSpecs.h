//===- TestSpecs.h - Small clusters written out in the tests ----*- C++ -*-===//

#ifndef WEFT_TEST_UNIT_COST_TESTSPECS_H
#define WEFT_TEST_UNIT_COST_TESTSPECS_H

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"
#include <numeric>
#include <vector>

namespace weft {
namespace test {

/// Parses spec text; fails the test on error.
inline ClusterSpec specFrom(llvm::StringRef text) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(text, "test.yaml");
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return ClusterSpec();
  }
  return std::move(*spec);
}

/// `nodes` nodes of `perNode` devices of `type`, NIC `nic` Gbit/s with
/// `nicUs` latency, intra-node `intra` GB/s with `intraUs` latency.
inline ClusterSpec uniformCluster(unsigned nodes, unsigned perNode,
                                  double nic = 100, double nicUs = 5,
                                  double intra = 100, double intraUs = 5,
                                  llvm::StringRef type = "V100") {
  return specFrom(llvm::formatv("nodes:\n"
                                "  - name: n\n"
                                "    count: {0}\n"
                                "    type: {1}\n"
                                "    devices: {2}\n"
                                "    nic_bandwidth: {3} Gbit/s\n"
                                "    nic_latency: {4} us\n"
                                "    intra_bandwidth: {5} GB/s\n"
                                "    intra_latency: {6} us\n",
                                nodes, type, perNode, nic, nicUs, intra,
                                intraUs)
                      .str());
}

/// Device ids 0..n-1.
inline std::vector<unsigned> firstDevices(unsigned n) {
  std::vector<unsigned> ids(n);
  std::iota(ids.begin(), ids.end(), 0u);
  return ids;
}

} // namespace test
} // namespace weft

#endif // WEFT_TEST_UNIT_COST_TESTSPECS_H
