//===- Placement.h - Gang placement of GPU parts onto nodes -----*- C++ -*-===//
//
// Free GPUs per node, bucketed by free count so that best-fit placement is
// O(GPUs per node) rather than O(nodes). A part of c GPUs is consolidated
// when it uses the fewest nodes possible (one node if c fits in one, else
// ceil(c / node size) whole nodes); otherwise it is spread.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_PLACEMENT_H
#define WEFT_SCHED_PLACEMENT_H

#include "weft/Sched/SchedCluster.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>

namespace weft {
namespace sched {

/// (node index, GPUs on it).
using NodeShare = std::pair<unsigned, unsigned>;

/// Where one part landed.
struct PartPlacement {
  std::vector<NodeShare> shares;
  bool consolidated = true;
};

class NodePool {
public:
  /// All healthy nodes of `cluster` start empty; failed ones hold nothing.
  NodePool(const SchedCluster &cluster, const std::vector<bool> &failed);

  /// Free GPUs of type `type`.
  unsigned freeOfType(unsigned type) const { return freeByType[type]; }
  /// Free GPUs on node `node`.
  unsigned freeOnNode(unsigned node) const { return freeGpus[node]; }
  /// Takes exactly `shares` if all are free; false (and no change) otherwise.
  bool take(llvm::ArrayRef<NodeShare> shares);
  /// Gives `shares` back.
  void release(llvm::ArrayRef<NodeShare> shares);
  /// Places `count` GPUs of `type`: consolidated if possible, else spread
  /// when `allowSpread`. std::nullopt when it does not fit.
  std::optional<PartPlacement> place(unsigned type, unsigned count,
                                     bool allowSpread);

private:
  void setFree(unsigned node, unsigned value);

  const SchedCluster &cluster;
  std::vector<unsigned> freeGpus;
  std::vector<unsigned> freeByType;
  /// [type][free count] -> nodes; posInBucket[node] indexes it.
  std::vector<std::vector<std::vector<unsigned>>> buckets;
  std::vector<unsigned> posInBucket;
  std::vector<bool> usable;
};

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_PLACEMENT_H
