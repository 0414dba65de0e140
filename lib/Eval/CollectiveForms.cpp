//===- CollectiveForms.cpp - Collective times as forms of the ratios ------===//
//
// The collective times mirror weft/Cost/Collective.cpp and Network.cpp term
// by term (a round: max latency + max over link resources of load /
// capacity); the consistency gtest (FromPlanTest) compares the resulting
// objective with evaluatePlan.
//
//===----------------------------------------------------------------------===//

#include "CollectiveForms.h"
#include "weft/Cost/Network.h"
#include "weft/Ratio/CostKey.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace weft;
using namespace weft::ratio;
using spmd::Collective;

const Form &CollectiveForms::time(Collective kind,
                                  llvm::ArrayRef<unsigned> group,
                                  llvm::ArrayRef<LinearCost> bytes,
                                  CollectiveVariant choice) {
  std::string key;
  int tag[] = {int(kind), int(choice.algo), int(choice.bestAllReduce),
               int(choice.uneven)};
  key.append(reinterpret_cast<const char *>(tag), sizeof(tag));
  key.append(reinterpret_cast<const char *>(&choice.bucketBytes),
             sizeof(double));
  key.append(reinterpret_cast<const char *>(group.data()),
             group.size() * sizeof(unsigned));
  for (const LinearCost &b : bytes)
    key += "/" + linearKey(b);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  return memo.try_emplace(key, compute(kind, group, bytes, choice))
      .first->second;
}

void CollectiveForms::addNicPieces(llvm::SmallVector<LinearCost, 2> &pieces,
                                   llvm::ArrayRef<unsigned> group,
                                   llvm::ArrayRef<LinearCost> bytes) {
  std::vector<unsigned> nodes;
  for (unsigned d : group)
    if (!llvm::is_contained(nodes, spec.devices[d].node))
      nodes.push_back(spec.devices[d].node);
  if (nodes.size() <= 1)
    return;
  for (unsigned node : nodes) {
    LinearCost outside;
    double bw = spec.nodes[node].nicBandwidth();
    for (unsigned i = 0; i < group.size(); ++i)
      if (spec.devices[group[i]].node != node)
        addScaled(outside, bytes[i], 1 / bw);
    pieces.push_back(std::move(outside));
  }
}

llvm::SmallVector<LinearCost, 2> CollectiveForms::roundPieces(
    llvm::ArrayRef<std::pair<unsigned, unsigned>> links,
    llvm::ArrayRef<LinearCost> bytes, double &latency) {
  // Resource -> (load, capacity), as roundBandwidthSeconds.
  std::map<std::pair<int, unsigned>, std::pair<LinearCost, double>> loads;
  auto load = [&](int kind, unsigned index, const LinearCost &b, double cap) {
    auto &entry = loads[{kind, index}];
    addScaled(entry.first, b);
    entry.second = cap;
  };
  latency = 0;
  for (auto [i, link] : llvm::enumerate(links)) {
    auto [src, dst] = link;
    if (src == dst || isZero(bytes[i]))
      continue;
    latency = std::max(latency, linkLatency(spec, src, dst));
    unsigned a = spec.devices[src].node, b = spec.devices[dst].node;
    if (a == b) {
      double intra = spec.nodes[a].intraBandwidth();
      load(0, src, bytes[i], intra);
      load(1, dst, bytes[i], intra);
      continue;
    }
    load(2, a, bytes[i], spec.nodes[a].nicBandwidth());
    load(3, b, bytes[i], spec.nodes[b].nicBandwidth());
    int la = spec.nodes[a].leafIndex, lb = spec.nodes[b].leafIndex;
    if (la != lb && la >= 0 && lb >= 0) {
      load(4, unsigned(la), bytes[i],
           spec.topology.leaves[la].uplinkBandwidth());
      load(5, unsigned(lb), bytes[i],
           spec.topology.leaves[lb].uplinkBandwidth());
    }
  }
  llvm::SmallVector<LinearCost, 2> pieces;
  for (auto &[resource, entry] : loads)
    if (entry.second > 0)
      pieces.push_back(scaledCost(entry.first, 1 / entry.second));
  return pieces;
}

Form CollectiveForms::compute(Collective kind, llvm::ArrayRef<unsigned> group,
                              llvm::ArrayRef<LinearCost> bytes,
                              CollectiveVariant choice) {
  Form out;
  unsigned n = group.size();
  if (n <= 1 || !spmd::communicates(kind) ||
      llvm::all_of(bytes, [](const LinearCost &b) { return isZero(b); }))
    return out;
  // Distinct member byte counts (the largest is what a padded or all-reduce
  // collective moves).
  std::vector<LinearCost> distinct;
  {
    std::vector<std::string> keys;
    for (const LinearCost &b : bytes) {
      std::string k = linearKey(b);
      if (!llvm::is_contained(keys, k)) {
        keys.push_back(k);
        distinct.push_back(b);
      }
    }
  }
  llvm::SmallVector<std::pair<unsigned, unsigned>> ring;
  for (unsigned i = 0; i < n; ++i)
    ring.push_back({group[i], group[(i + 1) % n]});

  // Bucketed (gradient sync): a contribution below a bucket pays
  // bytes / bucket of the latency of a bucket's collective. The branch
  // (below a bucket or not) is taken at the current ratios.
  double largest = 0;
  bool constant = true;
  for (const LinearCost &b : distinct) {
    largest = std::max(largest, valueAt(b, at));
    constant &= b.terms.empty();
  }
  double scale = bucketScale(choice, largest);
  if (choice.bucketBytes > 0 && !constant)
    linearized = true;
  // A piece a + s·b as it is priced: s·b + a·b / bucket when bucketed.
  auto piece = [&](const LinearCost &b, double a, double s) {
    if (scale > 1)
      return scaledCost(b, s + a / choice.bucketBytes);
    LinearCost p = scaledCost(b, s);
    p.constant += a;
    return p;
  };

  switch (kind) {
  case Collective::AllReduce: {
    AllReduceAlgo algo = choice.algo;
    if (choice.bestAllReduce) {
      // Chosen at the size that runs: a bucket when bucketed.
      double size = largest * scale;
      algo = fastestAllReduce(spec, group, size);
      // A choice was made at the current ratios unless all tie.
      double chosen = allReduceSeconds(spec, group, size, algo);
      for (AllReduceAlgo other :
           {AllReduceAlgo::Ring, AllReduceAlgo::Hierarchical,
            AllReduceAlgo::Tree})
        if (!constant && allReduceSeconds(spec, group, size, other) != chosen)
          linearized = true;
    }
    // The all-reduce time is affine in the buffer size for a fixed group:
    // a + s·L (probed at small and large L; two pieces if they differ).
    auto affine = [&](double l) {
      double t1 = allReduceSeconds(spec, group, l, algo);
      double t2 = allReduceSeconds(spec, group, 2 * l, algo);
      double s = (t2 - t1) / l;
      return std::make_pair(t1 - s * l, s);
    };
    auto [a0, s0] = affine(1);
    auto [a1, s1] = affine(1e9);
    llvm::SmallVector<LinearCost, 2> pieces;
    for (const LinearCost &b : distinct) {
      pieces.push_back(piece(b, a0, s0));
      if (std::fabs(a1 - a0) > 1e-12 * std::max(1.0, std::fabs(a0)) ||
          std::fabs(s1 - s0) > 1e-9 * std::fabs(s0))
        pieces.push_back(piece(b, a1, s1));
    }
    out.addMax(std::move(pieces));
    return out;
  }
  case Collective::AllGather:
  case Collective::ReduceScatter: {
    llvm::SmallVector<LinearCost, 2> pieces;
    if (choice.uneven == UnevenVariant::Padded) {
      std::vector<Transfer> unit;
      for (auto [s, d] : ring)
        unit.push_back({s, d, 1.0});
      double beta = roundBandwidthSeconds(spec, unit);
      double lat = roundSeconds(spec, unit) - beta;
      for (const LinearCost &b : distinct)
        pieces.push_back(piece(b, (n - 1) * lat, (n - 1) * beta));
    } else {
      LinearCost total;
      for (const LinearCost &b : bytes)
        addScaled(total, b);
      std::vector<LinearCost> linkBytes;
      for (unsigned i = 0; i < n; ++i) {
        LinearCost l = total;
        addScaled(l, bytes[(i + 1) % n], -1);
        linkBytes.push_back(scaledCost(l, 1 / options.groupedEfficiency));
      }
      double unused = 0;
      double ringLatency = 0;
      for (auto [s, d] : ring)
        ringLatency = std::max(ringLatency, linkLatency(spec, s, d));
      for (LinearCost &p : roundPieces(ring, linkBytes, unused)) {
        p.constant += (n - 1) * ringLatency / scale;
        pieces.push_back(std::move(p));
      }
    }
    addNicPieces(pieces, group, bytes);
    out.addMax(std::move(pieces));
    return out;
  }
  case Collective::AllToAll: {
    llvm::SmallVector<std::pair<unsigned, unsigned>> links;
    std::vector<LinearCost> linkBytes;
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = 0; j < n; ++j)
        if (i != j) {
          links.push_back({group[i], group[j]});
          linkBytes.push_back(scaledCost(bytes[i], 1.0 / n));
        }
    double latency = 0;
    llvm::SmallVector<LinearCost, 2> pieces =
        roundPieces(links, linkBytes, latency);
    out.lin.constant += latency;
    out.addMax(std::move(pieces));
    return out;
  }
  default:
    return out;
  }
}
