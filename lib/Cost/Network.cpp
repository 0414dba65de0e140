//===- Network.cpp - Time of concurrent transfers
//--------------------------===//

#include "weft/Cost/Network.h"
#include "AllPairsRound.h"
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
/// Bytes through one kind of resource, kept only for the resources a round
/// touches: a round of T transfers costs O(T), not O(devices + nodes).
struct SparseLoads {
  std::vector<double> load;
  std::vector<unsigned> touched;

  void add(unsigned i, double bytes) {
    if (i >= load.size())
      load.resize(i + 1, 0.0);
    if (load[i] == 0)
      touched.push_back(i);
    load[i] += bytes;
  }

  /// Largest load / capacity over the touched resources, which are then
  /// cleared; a loaded resource of capacity 0 (a spec without that link) is
  /// infinitely slow.
  template <typename Capacity> double takeWorst(Capacity capacity) {
    double seconds = 0;
    for (unsigned i : touched) {
      double cap = capacity(i);
      seconds = cap <= 0 ? std::numeric_limits<double>::infinity()
                         : std::max(seconds, load[i] / cap);
      load[i] = 0;
    }
    touched.clear();
    return seconds;
  }
};

/// Bytes through each resource of a round, per direction. One per thread,
/// reused by every round (cleared as it is read).
struct Loads {
  SparseLoads deviceOut, deviceIn, nicOut, nicIn, leafOut, leafIn;
};
} // namespace

/// roundBandwidthSeconds over the transfers `forEach` enumerates (it calls
/// its argument with each Transfer in order).
template <typename ForEach>
static double bandwidthSeconds(const ClusterSpec &spec, ForEach forEach) {
  thread_local Loads loads;
  forEach([&](const Transfer &t) {
    if (t.src == t.dst || t.bytes <= 0)
      return;
    unsigned a = spec.devices[t.src].node, b = spec.devices[t.dst].node;
    if (a == b) {
      loads.deviceOut.add(t.src, t.bytes);
      loads.deviceIn.add(t.dst, t.bytes);
      return;
    }
    loads.nicOut.add(a, t.bytes);
    loads.nicIn.add(b, t.bytes);
    int la = spec.nodes[a].leafIndex, lb = spec.nodes[b].leafIndex;
    if (la != lb && la >= 0 && lb >= 0) {
      loads.leafOut.add(la, t.bytes);
      loads.leafIn.add(lb, t.bytes);
    }
  });
  auto intra = [&](unsigned d) { return spec.nodeOf(d).intraBandwidth(); };
  auto nic = [&](unsigned n) { return spec.nodes[n].nicBandwidth(); };
  auto uplink = [&](unsigned l) {
    return spec.topology.leaves[l].uplinkBandwidth();
  };
  // Every list is cleared even when an earlier one is infinitely slow.
  double seconds[] = {
      loads.deviceOut.takeWorst(intra), loads.deviceIn.takeWorst(intra),
      loads.nicOut.takeWorst(nic),      loads.nicIn.takeWorst(nic),
      loads.leafOut.takeWorst(uplink),  loads.leafIn.takeWorst(uplink)};
  return *std::max_element(std::begin(seconds), std::end(seconds));
}

double weft::roundBandwidthSeconds(const ClusterSpec &spec,
                                   llvm::ArrayRef<Transfer> transfers) {
  return bandwidthSeconds(spec, [&](auto &&visit) {
    for (const Transfer &t : transfers)
      visit(t);
  });
}

double weft::allPairsRoundSeconds(const ClusterSpec &spec,
                                  llvm::ArrayRef<unsigned> group,
                                  llvm::ArrayRef<double> sendBytes) {
  // roundSeconds of the transfers {group[i] -> group[j], sendBytes[i] / n}
  // for i != j in (i, j) order: per node (AllPairsRound.cpp), or else
  // enumerated twice instead of stored (n² of them are gigabytes on a
  // cluster of thousands of devices).
  if (auto seconds = allPairsRoundByNode(spec, group, sendBytes))
    return *seconds;
  unsigned n = group.size();
  auto forEach = [&](auto &&visit) {
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = 0; j < n; ++j)
        if (i != j)
          visit(Transfer{group[i], group[j], sendBytes[i] / n});
  };
  double latency = 0;
  forEach([&](const Transfer &t) {
    if (t.src != t.dst && t.bytes > 0)
      latency = std::max(latency, linkLatency(spec, t.src, t.dst));
  });
  return latency + bandwidthSeconds(spec, forEach);
}

double weft::roundSeconds(const ClusterSpec &spec,
                          llvm::ArrayRef<Transfer> transfers) {
  double latency = 0;
  for (const Transfer &t : transfers)
    if (t.src != t.dst && t.bytes > 0)
      latency = std::max(latency, linkLatency(spec, t.src, t.dst));
  return latency + roundBandwidthSeconds(spec, transfers);
}
