//===- Collective.cpp - Collective communication time
//----------------------===//

#include "weft/Cost/Collective.h"
#include "weft/Cost/Network.h"
#include "llvm/Support/MathExtras.h"
#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

using namespace weft;

/// Transfers of one ring round where group[i] sends bytesOf(i) to group[i+1].
template <typename BytesOf>
static std::vector<Transfer> ringRound(DeviceGroup group, BytesOf bytesOf) {
  std::vector<Transfer> round;
  for (unsigned i = 0; i < group.size(); ++i)
    round.push_back({group[i], group[(i + 1) % group.size()], bytesOf(i)});
  return round;
}

/// The largest latency of a ring edge.
static double ringLatency(const ClusterSpec &spec, DeviceGroup group) {
  double latency = 0;
  for (unsigned i = 0; i < group.size(); ++i)
    latency = std::max(
        latency, linkLatency(spec, group[i], group[(i + 1) % group.size()]));
  return latency;
}

/// Members of `group` per node, in group order.
static std::vector<std::vector<unsigned>> byNode(const ClusterSpec &spec,
                                                 DeviceGroup group) {
  // Node -> its slot in `nodes` + 1 (0: none yet); one table per thread,
  // reset after use, so a group costs O(its size), not a tree of nodes.
  thread_local std::vector<unsigned> slot;
  if (slot.size() < spec.numNodes())
    slot.resize(spec.numNodes(), 0);
  std::vector<std::vector<unsigned>> nodes;
  for (unsigned d : group) {
    unsigned &s = slot[spec.devices[d].node];
    if (s == 0) {
      nodes.emplace_back();
      s = nodes.size();
    }
    nodes[s - 1].push_back(d);
  }
  for (const auto &members : nodes)
    slot[spec.devices[members.front()].node] = 0;
  return nodes;
}

double weft::pointToPointSeconds(const ClusterSpec &spec, unsigned src,
                                 unsigned dst, double bytes) {
  Transfer t{src, dst, bytes};
  return roundSeconds(spec, t);
}

static double ringAllReduce(const ClusterSpec &spec, DeviceGroup group,
                            double bytes) {
  unsigned n = group.size();
  if (n <= 1 || bytes <= 0)
    return 0;
  auto round = ringRound(group, [&](unsigned) { return bytes / n; });
  return 2.0 * (n - 1) * roundSeconds(spec, round);
}

static double hierarchicalAllReduce(const ClusterSpec &spec, DeviceGroup group,
                                    double bytes) {
  std::vector<std::vector<unsigned>> nodes = byNode(spec, group);
  unsigned m = nodes.size();
  unsigned smallest = group.size();
  for (const auto &members : nodes)
    smallest = std::min<unsigned>(smallest, members.size());
  if (m <= 1 || group.size() == m)
    return ringAllReduce(spec, group, bytes);
  // Phase 1 (and 3, its mirror): a ring reduce-scatter inside every node;
  // nodes run at once on disjoint links, so the slowest node counts.
  double intra = 0;
  for (const auto &members : nodes) {
    unsigned k = members.size();
    if (k <= 1)
      continue;
    auto round = ringRound(members, [&](unsigned) { return bytes / k; });
    intra = std::max(intra, (k - 1) * roundSeconds(spec, round));
  }
  // Phase 2: one ring across nodes per local rank (up to the smallest node),
  // each all-reducing 1/smallest of the buffer, all rings at once so they
  // share every NIC.
  std::vector<Transfer> round;
  double chunk = bytes / (double(smallest) * m);
  for (unsigned r = 0; r < smallest; ++r)
    for (unsigned j = 0; j < m; ++j)
      round.push_back({nodes[j][r], nodes[(j + 1) % m][r], chunk});
  double inter = 2.0 * (m - 1) * roundSeconds(spec, round);
  return 2 * intra + inter;
}

/// Transfers of the reduce half of a tree all-reduce (the broadcast half is
/// its mirror): each member sends the buffer to the one before it in its
/// node; the nodes' first members form two binary trees in heap order, the
/// second over the nodes reversed, and send half the buffer to their parent
/// in each. A node is inside one tree and a leaf of the other, so its NIC
/// carries about the buffer once each way. `latency` is set to the longest
/// path's: the longest chain's hops and floor(log2 nodes) tree hops, each
/// at the largest latency of its kind of link.
static std::vector<Transfer> treeReduce(const ClusterSpec &spec,
                                        DeviceGroup group, double bytes,
                                        double &latency) {
  std::vector<std::vector<unsigned>> nodes = byNode(spec, group);
  std::vector<Transfer> round;
  double chainLatency = 0, treeLatency = 0;
  size_t chain = 0;
  for (const auto &members : nodes) {
    chain = std::max(chain, members.size() - 1);
    for (unsigned i = 1; i < members.size(); ++i) {
      round.push_back({members[i], members[i - 1], bytes});
      chainLatency =
          std::max(chainLatency, linkLatency(spec, members[i], members[i - 1]));
    }
  }
  unsigned m = nodes.size();
  auto leader = [&](unsigned j, bool mirrored) {
    return nodes[mirrored ? m - 1 - j : j][0];
  };
  for (unsigned j = 1; j < m; ++j)
    for (bool mirrored : {false, true}) {
      unsigned child = leader(j, mirrored),
               parent = leader((j - 1) / 2, mirrored);
      round.push_back({child, parent, bytes / 2});
      treeLatency = std::max(treeLatency, linkLatency(spec, child, parent));
    }
  // Heap depth: floor(log2 m) tree hops below the root.
  unsigned depth = m > 1 ? llvm::Log2_32(m) : 0;
  latency = double(chain) * chainLatency + double(depth) * treeLatency;
  return round;
}

static double treeAllReduce(const ClusterSpec &spec, DeviceGroup group,
                            double bytes) {
  if (group.size() <= 1 || bytes <= 0)
    return 0;
  double latency = 0;
  std::vector<Transfer> round = treeReduce(spec, group, bytes, latency);
  // Pipelined: each half takes the path's latency plus its most loaded
  // resource's bytes / capacity.
  return 2 * (latency + roundBandwidthSeconds(spec, round));
}

double weft::allReduceSeconds(const ClusterSpec &spec, DeviceGroup group,
                              double bytes, AllReduceAlgo algo) {
  switch (algo) {
  case AllReduceAlgo::Hierarchical:
    return hierarchicalAllReduce(spec, group, bytes);
  case AllReduceAlgo::Tree:
    return treeAllReduce(spec, group, bytes);
  case AllReduceAlgo::Ring:
    break;
  }
  return ringAllReduce(spec, group, bytes);
}

AllReduceAlgo weft::fastestAllReduce(const ClusterSpec &spec, DeviceGroup group,
                                     double bytes) {
  AllReduceAlgo best = AllReduceAlgo::Ring;
  double seconds = ringAllReduce(spec, group, bytes);
  for (AllReduceAlgo algo :
       {AllReduceAlgo::Hierarchical, AllReduceAlgo::Tree}) {
    double t = allReduceSeconds(spec, group, bytes, algo);
    if (t < seconds) {
      seconds = t;
      best = algo;
    }
  }
  return best;
}

double weft::nicLoadSeconds(const ClusterSpec &spec, DeviceGroup group,
                            llvm::ArrayRef<double> shardBytes) {
  std::map<unsigned, double> inside;
  double total = 0;
  for (unsigned i = 0; i < group.size(); ++i) {
    inside[spec.devices[group[i]].node] += shardBytes[i];
    total += shardBytes[i];
  }
  if (inside.size() <= 1)
    return 0;
  double seconds = 0;
  for (auto [node, bytes] : inside)
    seconds =
        std::max(seconds, (total - bytes) / spec.nodes[node].nicBandwidth());
  return seconds;
}

/// All-gather and reduce-scatter move the same bytes over the same links in
/// opposite directions of the data flow, so one function times both.
static double unevenRingCollective(const ClusterSpec &spec, DeviceGroup group,
                                   llvm::ArrayRef<double> shardBytes,
                                   UnevenVariant variant,
                                   const CollectiveOptions &options) {
  unsigned n = group.size();
  if (n <= 1)
    return 0;
  double nicBound = nicLoadSeconds(spec, group, shardBytes);
  if (variant == UnevenVariant::Padded) {
    double largest = *std::max_element(shardBytes.begin(), shardBytes.end());
    if (largest <= 0)
      return 0;
    auto round = ringRound(group, [&](unsigned) { return largest; });
    return std::max((n - 1) * roundSeconds(spec, round), nicBound);
  }
  // Grouped: shard j travels the n-1 ring links from its owner, so the link
  // into group[i+1] carries every shard but group[i+1]'s own.
  double total = std::accumulate(shardBytes.begin(), shardBytes.end(), 0.0);
  if (total <= 0)
    return 0;
  auto round = ringRound(group, [&](unsigned i) {
    return (total - shardBytes[(i + 1) % n]) / options.groupedEfficiency;
  });
  double seconds =
      (n - 1) * ringLatency(spec, group) + roundBandwidthSeconds(spec, round);
  return std::max(seconds, nicBound);
}

double weft::allGatherSeconds(const ClusterSpec &spec, DeviceGroup group,
                              llvm::ArrayRef<double> shardBytes,
                              UnevenVariant variant,
                              const CollectiveOptions &options) {
  return unevenRingCollective(spec, group, shardBytes, variant, options);
}

double weft::reduceScatterSeconds(const ClusterSpec &spec, DeviceGroup group,
                                  llvm::ArrayRef<double> shardBytes,
                                  UnevenVariant variant,
                                  const CollectiveOptions &options) {
  return unevenRingCollective(spec, group, shardBytes, variant, options);
}

double weft::allToAllSeconds(const ClusterSpec &spec, DeviceGroup group,
                             llvm::ArrayRef<double> sendBytes) {
  return allPairsRoundSeconds(spec, group, sendBytes);
}

double weft::broadcastSeconds(const ClusterSpec &spec, DeviceGroup group,
                              unsigned rootIndex, double bytes) {
  unsigned n = group.size();
  if (n <= 1 || bytes <= 0)
    return 0;
  // Pipelined along the ring from the root: every link but the one back
  // into the root carries the whole buffer.
  auto round = ringRound(group, [&](unsigned i) {
    return (i + 1) % n == rootIndex ? 0.0 : bytes;
  });
  return (n - 1) * ringLatency(spec, group) +
         roundBandwidthSeconds(spec, round);
}
