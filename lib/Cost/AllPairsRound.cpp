//===- AllPairsRound.cpp - An all-to-all round priced per node ------------===//
//
// The round where every member of a group sends the same bytes to every
// other member, priced from the members per node and per leaf instead of
// from its n² transfers. Every resource's load is summed in the order the
// transfers (i, j), i outer, would add to it, so the result equals
// roundSeconds of the enumerated round bit for bit: a member's bytes added
// once per receiver are added as many times in a tight loop.
//
//===----------------------------------------------------------------------===//

#include "AllPairsRound.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace weft;

/// `sum` plus `bytes`, `times` times over, one addition at a time.
static double addRepeated(double sum, double bytes, uint64_t times) {
  for (uint64_t k = 0; k < times; ++k)
    sum += bytes;
  return sum;
}

namespace {
/// The largest load / capacity of the loaded resources; a loaded resource
/// of capacity 0 is infinitely slow.
struct Worst {
  double seconds = 0;
  void see(bool loaded, double load, double capacity) {
    if (!loaded)
      return;
    seconds = capacity <= 0 ? std::numeric_limits<double>::infinity()
                            : std::max(seconds, load / capacity);
  }
};
} // namespace

std::optional<double>
weft::allPairsRoundByNode(const ClusterSpec &spec,
                          llvm::ArrayRef<unsigned> group,
                          llvm::ArrayRef<double> sendBytes) {
  unsigned n = group.size();
  std::vector<double> bytes(n);
  for (unsigned i = 0; i < n; ++i) {
    bytes[i] = sendBytes[i] / n;
    if (std::isnan(bytes[i]))
      return std::nullopt;
  }
  {
    std::vector<unsigned> sorted(group.begin(), group.end());
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return std::nullopt;
  }
  // The group's nodes and leaves in order of first member; a member's
  // position in its node.
  std::vector<unsigned> nodeOf(n), nodes;
  std::vector<std::vector<unsigned>> members;
  std::map<unsigned, unsigned> nodeSlot;
  for (unsigned i = 0; i < n; ++i) {
    unsigned node = spec.devices[group[i]].node;
    auto [it, inserted] = nodeSlot.try_emplace(node, nodes.size());
    if (inserted) {
      nodes.push_back(node);
      members.emplace_back();
    }
    nodeOf[i] = it->second;
    members[it->second].push_back(i);
  }
  unsigned m = nodes.size();
  std::vector<int> leafOf(m);
  std::map<int, uint64_t> inLeaf; // members below each leaf (leaf >= 0)
  uint64_t inSomeLeaf = 0;
  for (unsigned a = 0; a < m; ++a) {
    leafOf[a] = spec.nodes[nodes[a]].leafIndex;
    if (leafOf[a] >= 0) {
      inLeaf[leafOf[a]] += members[a].size();
      inSomeLeaf += members[a].size();
    }
  }
  auto sends = [&](unsigned i) { return bytes[i] > 0; };

  // Latency: the largest linkLatency of a pair whose sender sends; it
  // depends on the two nodes only.
  double latency = 0;
  std::vector<bool> nodeSends(m, false);
  for (unsigned i = 0; i < n; ++i)
    if (sends(i))
      nodeSends[nodeOf[i]] = true;
  for (unsigned a = 0; a < m; ++a) {
    if (!nodeSends[a])
      continue;
    unsigned from = group[members[a][0]];
    for (unsigned b = 0; b < m; ++b) {
      if (b == a && members[a].size() < 2)
        continue;
      unsigned to = group[members[b][b == a ? 1 : 0]];
      latency = std::max(latency, linkLatency(spec, from, to));
    }
  }

  Worst worst;
  // Inside a node: member i sends bytes[i] to each of the node's others
  // (out), and member j receives them in member order (in).
  for (unsigned a = 0; a < m; ++a) {
    const Node &node = spec.nodes[nodes[a]];
    uint64_t others = members[a].size() - 1;
    for (unsigned i : members[a])
      if (sends(i) && others > 0)
        worst.see(true, addRepeated(0, bytes[i], others),
                  node.intraBandwidth());
    for (unsigned j : members[a]) {
      double in = 0;
      bool loaded = false;
      for (unsigned i : members[a])
        if (i != j && sends(i)) {
          in += bytes[i];
          loaded = true;
        }
      worst.see(loaded, in, node.intraBandwidth());
    }
  }
  // Across nodes and leaves, summed in sender order.
  std::vector<double> nicOut(m, 0), nicIn(m, 0);
  std::vector<bool> nicOutLoaded(m, false), nicInLoaded(m, false);
  std::map<int, double> leafOut, leafIn;
  for (unsigned i = 0; i < n; ++i) {
    if (!sends(i))
      continue;
    unsigned a = nodeOf[i];
    if (uint64_t outside = n - members[a].size()) {
      nicOut[a] = addRepeated(nicOut[a], bytes[i], outside);
      nicOutLoaded[a] = true;
    }
    for (unsigned b = 0; b < m; ++b)
      if (b != a) {
        nicIn[b] = addRepeated(nicIn[b], bytes[i], members[b].size());
        nicInLoaded[b] = true;
      }
    int la = leafOf[a];
    if (la < 0)
      continue;
    if (uint64_t elsewhere = inSomeLeaf - inLeaf[la]) {
      auto [out, unused] = leafOut.try_emplace(la, 0.0);
      out->second = addRepeated(out->second, bytes[i], elsewhere);
    }
    for (auto [lb, count] : inLeaf)
      if (lb != la) {
        auto [in, unused] = leafIn.try_emplace(lb, 0.0);
        in->second = addRepeated(in->second, bytes[i], count);
      }
  }
  for (unsigned a = 0; a < m; ++a) {
    double nic = spec.nodes[nodes[a]].nicBandwidth();
    worst.see(nicOutLoaded[a], nicOut[a], nic);
    worst.see(nicInLoaded[a], nicIn[a], nic);
  }
  for (const auto *loads : {&leafOut, &leafIn})
    for (auto [leaf, load] : *loads)
      worst.see(true, load, spec.topology.leaves[leaf].uplinkBandwidth());
  return latency + worst.seconds;
}
