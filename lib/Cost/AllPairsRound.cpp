//===- AllPairsRound.cpp - An all-to-all round priced per node ------------===//
//
// The round where every member of a group sends the same bytes to every
// other member, priced from the members per node and per leaf instead of
// from its n² transfers. Every resource's load is summed in the order the
// transfers (i, j), i outer, would add to it, so the result equals
// roundSeconds of the enumerated round bit for bit: a member's bytes added
// once per receiver are added as many times (addRepeated).
//
//===----------------------------------------------------------------------===//

#include "AllPairsRound.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace weft;

/// `sum` plus `bytes`, `times` times over, one rounded addition at a time,
/// in O(binades crossed): while the sum stays in one binade (ulp u) and
/// `bytes` is not an odd multiple of u/2, every addition adds the same
/// multiple of u, so runs of them are taken at once, exactly.
static double addRepeated(double sum, double bytes, uint64_t times) {
  if (times <= 16) {
    for (uint64_t k = 0; k < times; ++k)
      sum += bytes;
    return sum;
  }
  while (times > 0) {
    if (!(bytes > 0) || !(sum >= bytes) || !std::isfinite(sum) ||
        !std::isnormal(sum)) {
      sum += bytes;
      --times;
      continue;
    }
    int e = std::ilogb(sum);
    double ulp = std::ldexp(1.0, e - 52), top = std::ldexp(1.0, e + 1);
    double rest = std::fmod(bytes, ulp);
    if (rest == ulp / 2) { // ties to even: the step depends on the sum
      sum += bytes;
      --times;
      continue;
    }
    // What one addition adds inside this binade (a multiple of ulp).
    double step = bytes - rest + (rest > ulp / 2 ? ulp : 0);
    if (step == 0)
      return sum; // every addition rounds back to the sum
    // Runs that end at least one step below the binade's top (two steps of
    // margin for the division's rounding), so every addition of the run
    // rounds inside the binade.
    double fit = std::floor((top - sum) / step) - 2;
    if (fit < 1) {
      sum += bytes;
      --times;
      continue;
    }
    uint64_t run = std::min<uint64_t>(times, uint64_t(fit));
    sum += double(run) * step; // exact: a multiple of ulp below top
    times -= run;
  }
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
  // Across nodes and leaves, summed in sender order. A sender's bytes go
  // out through its NIC (and leaf) once per member elsewhere, consecutively.
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
    int la = leafOf[a];
    if (la < 0)
      continue;
    if (uint64_t elsewhere = inSomeLeaf - inLeaf[la]) {
      auto [out, unused] = leafOut.try_emplace(la, 0.0);
      out->second = addRepeated(out->second, bytes[i], elsewhere);
    }
  }
  // Inbound, a node (leaf) adds each outside sender's bytes once per member
  // it has, in sender order: over runs of consecutive members sending
  // bit-identical bytes (a class's members usually do), one run is one
  // stretch of equal additions, less the run's members on that node (leaf).
  struct Run {
    unsigned size = 0, inSomeLeaf = 0;
    double bytes = 0;
  };
  std::vector<Run> runs;
  std::vector<unsigned> runOf(n);
  std::map<int, std::vector<unsigned>> leafMembers;
  for (unsigned i = 0; i < n; ++i) {
    if (runs.empty() ||
        std::memcmp(&runs.back().bytes, &bytes[i], sizeof(double)) != 0)
      runs.push_back({0, 0, bytes[i]});
    runOf[i] = runs.size() - 1;
    ++runs.back().size;
    if (int leaf = leafOf[nodeOf[i]]; leaf >= 0) {
      ++runs.back().inSomeLeaf;
      leafMembers[leaf].push_back(i);
    }
  }
  std::vector<unsigned> own(runs.size(), 0);
  auto inbound = [&](llvm::ArrayRef<unsigned> here, uint64_t perSender,
                     auto sendersOf, double &load, bool &loaded) {
    for (unsigned i : here)
      ++own[runOf[i]];
    for (unsigned r = 0; r < runs.size(); ++r) {
      uint64_t senders = sendersOf(runs[r]) - own[r];
      if (runs[r].bytes > 0 && senders > 0) {
        load = addRepeated(load, runs[r].bytes, senders * perSender);
        loaded = true;
      }
    }
    for (unsigned i : here)
      own[runOf[i]] = 0;
  };
  for (unsigned b = 0; b < m; ++b) {
    bool loaded = false;
    inbound(
        members[b], members[b].size(), [](const Run &run) { return run.size; },
        nicIn[b], loaded);
    nicInLoaded[b] = loaded;
  }
  for (auto &[lb, here] : leafMembers) {
    double load = 0;
    bool loaded = false;
    inbound(
        here, here.size(), [](const Run &run) { return run.inSomeLeaf; }, load,
        loaded);
    if (loaded)
      leafIn[lb] = load;
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
