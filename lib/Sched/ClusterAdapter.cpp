//===- ClusterAdapter.cpp - SchedCluster from a ClusterSpec --------------===//
//
// The only file of lib/Sched that includes lib/Cluster.
//
//===----------------------------------------------------------------------===//

#include "weft/Sched/ClusterAdapter.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

namespace {
/// Gavel's measured worker types and their FP32 peak TFLOPS (spec sheets,
/// docs/Setups.md), the anchors of the equivalence table.
struct Anchor {
  StringRef name;
  double fp32Tflops;
};
const Anchor kAnchors[] = {{"v100", 15.7}, {"p100", 10.6}, {"k80", 4.4}};
/// Speed factors are clamped to this range: peak FLOPS overstate the gain of
/// newer GPUs on Gavel's small models.
constexpr double kMinFactor = 0.25, kMaxFactor = 2.0;
} // namespace

llvm::Expected<std::pair<std::string, double>>
sched::mapGpuType(StringRef name, StringRef gavelName, double fp32Tflops,
                  const ThroughputOracle &oracle) {
  std::vector<std::string> known = oracle.gpuTypes();
  auto knows = [&](StringRef type) {
    return llvm::is_contained(known, type.lower());
  };
  // 1. Measured by the oracle under its own or its Gavel name.
  if (!gavelName.empty() && knows(gavelName))
    return std::make_pair(gavelName.lower(), 1.0);
  if (knows(name))
    return std::make_pair(name.lower(), 1.0);
  // 2. Variants of a measured type ("V100M32", "P100-PCIe").
  for (const Anchor &anchor : kAnchors)
    if (knows(anchor.name) && name.lower().find(anchor.name) == 0)
      return std::make_pair(anchor.name.str(), 1.0);
  // 3. The measured type nearest in log(FP32 TFLOPS), scaled by the ratio.
  const Anchor *best = nullptr;
  for (const Anchor &anchor : kAnchors) {
    if (!knows(anchor.name))
      continue;
    if (!best || std::abs(std::log(fp32Tflops / anchor.fp32Tflops)) <
                     std::abs(std::log(fp32Tflops / best->fp32Tflops)))
      best = &anchor;
  }
  if (!best)
    return badInput("GPU type '{0}': the oracle measured none of v100, p100, "
                    "k80 (it knows {1})",
                    name, llvm::join(known, ", "));
  if (fp32Tflops <= 0)
    return std::make_pair(best->name.str(), 1.0);
  double factor =
      std::clamp(fp32Tflops / best->fp32Tflops, kMinFactor, kMaxFactor);
  return std::make_pair(best->name.str(), factor);
}

llvm::Expected<SchedCluster>
sched::adaptCluster(const ClusterSpec &spec, const ThroughputOracle &oracle) {
  SchedCluster cluster;
  cluster.name = spec.name;
  for (const DeviceType &type : spec.deviceTypes) {
    auto mapped =
        mapGpuType(type.name, type.gavelName, type.fp32Tflops, oracle);
    if (!mapped)
      return mapped.takeError();
    cluster.types.push_back({type.name, mapped->first, mapped->second, 0, 0});
  }
  cluster.numSpines = std::max(1u, spec.topology.numSpines);
  for (const LeafSwitch &leaf : spec.topology.leaves)
    cluster.leaves.push_back({leaf.name, leaf.uplinkBandwidthGbps});
  for (const Node &node : spec.nodes) {
    int type = cluster.findType(node.deviceType);
    if (type < 0)
      return badInput("cluster '{0}': node '{1}' has unknown device type "
                      "'{2}'",
                      spec.name, node.name, node.deviceType);
    cluster.nodes.push_back({node.name, unsigned(type), node.numDevices,
                             node.nicBandwidthGbps, node.leafIndex});
  }
  cluster.recount();
  if (cluster.totalGpus() == 0)
    return badInput("cluster '{0}': no GPUs", spec.name);
  return cluster;
}

llvm::Expected<SchedCluster>
sched::loadSchedCluster(StringRef arg, const ThroughputOracle &oracle) {
  if (arg.startswith("gpus:")) {
    auto cluster = parseInlineCluster(arg);
    if (!cluster)
      return cluster.takeError();
    for (const GpuType &type : cluster->types)
      if (!llvm::is_contained(oracle.gpuTypes(), type.name))
        return badInput("cluster '{0}': GPU type '{1}' is not an oracle type "
                        "(known: {2})",
                        arg, type.name, llvm::join(oracle.gpuTypes(), ", "));
    return cluster;
  }
  llvm::Expected<ClusterSpec> spec = loadClusterSpec(arg);
  if (!spec)
    return spec.takeError();
  return adaptCluster(*spec, oracle);
}
