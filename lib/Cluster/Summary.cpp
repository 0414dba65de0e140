//===- Summary.cpp - Human-readable cluster summary
//------------------------===//

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;

/// A figure with up to 4 significant digits and no trailing zeros.
static std::string num(double x) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4g", x);
  return text;
}

static void printTypes(const ClusterSpec &spec, llvm::raw_ostream &os) {
  auto counts = spec.gpuCountsByType();
  os << "device types:\n";
  for (const DeviceType &t : spec.deviceTypes)
    os << llvm::formatv("  {0,-10} x{1,-4} fp32 {2,6:f1} TFLOPS  fp16 {3,6:f1} "
                        "TFLOPS  bf16 {4,6:f1} TFLOPS  {5,5:f0} GB  "
                        "{6,6:f0} GB/s\n",
                        t.name, counts[t.name], t.fp32Tflops, t.fp16Tflops,
                        t.bf16Tflops, t.memoryGB, t.memBandwidthGBps);
}

static void printClasses(const ClusterSpec &spec, llvm::raw_ostream &os) {
  os << "device classes:\n";
  for (const DeviceClass &c : spec.classes) {
    os << llvm::formatv("  class {0}: {1} x {2} ({3} nodes x {4} devices), "
                        "nic {5} Gbit/s {6} us",
                        c.id, c.devices.size(), c.deviceType, c.nodes.size(),
                        c.devicesPerNode, num(c.nicBandwidthGbps),
                        num(c.nicLatencyUs));
    if (c.devicesPerNode > 1)
      os << llvm::formatv(", intra {0} GB/s {1} us", num(c.intraBandwidthGBps),
                          num(c.intraLatencyUs));
    os << "\n";
  }
}

static void printTopology(const ClusterSpec &spec, llvm::raw_ostream &os) {
  if (spec.topology.empty())
    return;
  os << llvm::formatv("topology: {0} leaf switches, {1} spines\n",
                      spec.topology.leaves.size(), spec.topology.numSpines);
  for (const LeafSwitch &l : spec.topology.leaves)
    os << llvm::formatv("  {0}: {1} nodes, uplink {2} Gbit/s, "
                        "oversubscription {3:f2}:1\n",
                        l.name, l.nodes.size(), num(l.uplinkBandwidthGbps),
                        l.oversubscription);
}

void weft::printClusterSummary(const ClusterSpec &spec, llvm::raw_ostream &os) {
  double memoryGB = 0;
  for (const Node &n : spec.nodes)
    memoryGB += n.numDevices * spec.deviceTypes[n.typeIndex].memoryGB;
  os << llvm::formatv("cluster '{0}': {1} devices on {2} nodes, {3} device "
                      "classes, {4:f0} GB device memory\n",
                      spec.name, spec.numDevices(), spec.numNodes(),
                      spec.classes.size(), memoryGB);
  printTypes(spec, os);
  printClasses(spec, os);
  printTopology(spec, os);
  os << llvm::formatv("peak: fp32 {0:f1} TFLOPS, bf16 {1:f1} TFLOPS, fp16 "
                      "{2:f1} TFLOPS\n",
                      spec.totalPeakFlops(DType::FP32) / 1e12,
                      spec.totalPeakFlops(DType::BF16) / 1e12,
                      spec.totalPeakFlops(DType::FP16) / 1e12);
}
