//===- Placement.cpp - Gang placement of GPU parts onto nodes ------------===//

#include "weft/Sched/Placement.h"
#include <cassert>

using namespace weft;
using namespace weft::sched;

NodePool::NodePool(const SchedCluster &cluster, const std::vector<bool> &failed)
    : cluster(cluster), freeGpus(cluster.nodes.size(), 0),
      freeByType(cluster.types.size(), 0), buckets(cluster.types.size()),
      posInBucket(cluster.nodes.size(), 0),
      usable(cluster.nodes.size(), false) {
  for (unsigned t = 0; t < cluster.types.size(); ++t)
    buckets[t].resize(cluster.types[t].maxPerNode + 1);
  for (unsigned n = 0; n < cluster.nodes.size(); ++n) {
    const SchedNode &node = cluster.nodes[n];
    auto &bucket = buckets[node.type][0];
    posInBucket[n] = bucket.size();
    bucket.push_back(n);
    if (n < failed.size() && failed[n])
      continue;
    usable[n] = true;
    setFree(n, node.numGpus);
  }
}

void NodePool::setFree(unsigned node, unsigned value) {
  unsigned type = cluster.nodes[node].type;
  auto &from = buckets[type][freeGpus[node]];
  unsigned pos = posInBucket[node];
  from[pos] = from.back();
  posInBucket[from[pos]] = pos;
  from.pop_back();
  auto &to = buckets[type][value];
  posInBucket[node] = to.size();
  to.push_back(node);
  freeByType[type] += value;
  freeByType[type] -= freeGpus[node];
  freeGpus[node] = value;
}

bool NodePool::take(llvm::ArrayRef<NodeShare> shares) {
  for (const NodeShare &share : shares)
    if (share.first >= freeGpus.size() || !usable[share.first] ||
        freeGpus[share.first] < share.second)
      return false;
  for (const NodeShare &share : shares)
    setFree(share.first, freeGpus[share.first] - share.second);
  return true;
}

void NodePool::release(llvm::ArrayRef<NodeShare> shares) {
  for (const NodeShare &share : shares) {
    assert(freeGpus[share.first] + share.second <=
               cluster.nodes[share.first].numGpus &&
           "released more GPUs than the node has");
    setFree(share.first, freeGpus[share.first] + share.second);
  }
}

std::optional<PartPlacement> NodePool::place(unsigned type, unsigned count,
                                             bool allowSpread) {
  if (count == 0 || freeByType[type] < count)
    return std::nullopt;
  unsigned maxFree = buckets[type].size() - 1;
  PartPlacement result;
  // One node, best fit.
  for (unsigned f = count; f <= maxFree; ++f) {
    if (buckets[type][f].empty())
      continue;
    unsigned node = buckets[type][f].back();
    result.shares.push_back({node, count});
    take(result.shares);
    return result;
  }
  // Whole free nodes, fewest first.
  if (count > maxFree) {
    unsigned need = (count + maxFree - 1) / maxFree;
    if (buckets[type][maxFree].size() >= need) {
      unsigned left = count;
      for (unsigned i = 0; i < need; ++i) {
        unsigned node = buckets[type][maxFree][i];
        unsigned n = std::min(left, maxFree);
        result.shares.push_back({node, n});
        left -= n;
      }
      take(result.shares);
      return result;
    }
  }
  if (!allowSpread)
    return std::nullopt;
  // Spread: fullest-free nodes first, so fewest nodes are used.
  result.consolidated = false;
  unsigned left = count;
  for (unsigned f = maxFree; f > 0 && left > 0; --f)
    for (unsigned node : buckets[type][f]) {
      unsigned n = std::min(left, f);
      result.shares.push_back({node, n});
      left -= n;
      if (left == 0)
        break;
    }
  assert(left == 0 && "free count and buckets disagree");
  take(result.shares);
  return result;
}
