//===- Network.cpp - Time of concurrent transfers
//--------------------------===//

#include "weft/Cost/Network.h"
#include <algorithm>
#include <limits>
#include <vector>

using namespace weft;

double weft::linkLatency(const ClusterSpec &spec, unsigned src, unsigned dst) {
  if (src == dst)
    return 0;
  const Node &a = spec.nodeOf(src);
  const Node &b = spec.nodeOf(dst);
  if (&a == &b)
    return a.intraLatency();
  double latency = std::max(a.nicLatency(), b.nicLatency());
  if (a.leafIndex != b.leafIndex)
    latency += spec.topology.spineLatencyUs * 1e-6;
  return latency;
}

namespace {
/// Bytes through each resource of a round, per direction.
struct Loads {
  std::vector<double> deviceOut, deviceIn, nicOut, nicIn, leafOut, leafIn;

  explicit Loads(const ClusterSpec &spec)
      : deviceOut(spec.numDevices()), deviceIn(spec.numDevices()),
        nicOut(spec.numNodes()), nicIn(spec.numNodes()),
        leafOut(spec.topology.leaves.size()),
        leafIn(spec.topology.leaves.size()) {}
};
} // namespace

/// Largest load / capacity over `loads`; a loaded resource of capacity 0
/// (a spec without that link) is infinitely slow.
template <typename Capacity>
static double worst(const std::vector<double> &loads, Capacity capacity) {
  double seconds = 0;
  for (unsigned i = 0; i < loads.size(); ++i) {
    if (loads[i] <= 0)
      continue;
    double cap = capacity(i);
    if (cap <= 0)
      return std::numeric_limits<double>::infinity();
    seconds = std::max(seconds, loads[i] / cap);
  }
  return seconds;
}

double weft::roundBandwidthSeconds(const ClusterSpec &spec,
                                   llvm::ArrayRef<Transfer> transfers) {
  Loads loads(spec);
  for (const Transfer &t : transfers) {
    if (t.src == t.dst || t.bytes <= 0)
      continue;
    unsigned a = spec.devices[t.src].node, b = spec.devices[t.dst].node;
    if (a == b) {
      loads.deviceOut[t.src] += t.bytes;
      loads.deviceIn[t.dst] += t.bytes;
      continue;
    }
    loads.nicOut[a] += t.bytes;
    loads.nicIn[b] += t.bytes;
    int la = spec.nodes[a].leafIndex, lb = spec.nodes[b].leafIndex;
    if (la != lb && la >= 0 && lb >= 0) {
      loads.leafOut[la] += t.bytes;
      loads.leafIn[lb] += t.bytes;
    }
  }
  auto intra = [&](unsigned d) { return spec.nodeOf(d).intraBandwidth(); };
  auto nic = [&](unsigned n) { return spec.nodes[n].nicBandwidth(); };
  auto uplink = [&](unsigned l) {
    return spec.topology.leaves[l].uplinkBandwidth();
  };
  return std::max({worst(loads.deviceOut, intra), worst(loads.deviceIn, intra),
                   worst(loads.nicOut, nic), worst(loads.nicIn, nic),
                   worst(loads.leafOut, uplink), worst(loads.leafIn, uplink)});
}

double weft::roundSeconds(const ClusterSpec &spec,
                          llvm::ArrayRef<Transfer> transfers) {
  double latency = 0;
  for (const Transfer &t : transfers)
    if (t.src != t.dst && t.bytes > 0)
      latency = std::max(latency, linkLatency(spec, t.src, t.dst));
  return latency + roundBandwidthSeconds(spec, transfers);
}
