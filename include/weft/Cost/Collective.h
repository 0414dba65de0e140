//===- Collective.h - Collective communication time ---------------*- C++
//-*-===//
//
// Alpha-beta times of the collectives the `spmd` dialect uses, on the
// cluster's actual links (docs/CostModel.md). A group is a list of device ids
// in ring order: device i sends to device i+1 (mod n). Give groups in
// node-major order (ascending device ids) so a ring crosses each NIC once.
// Byte counts are per device; uneven shards are first-class.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_COLLECTIVE_H
#define WEFT_COST_COLLECTIVE_H

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/ADT/ArrayRef.h"

namespace weft {

/// Device ids taking part in a collective, in ring order.
using DeviceGroup = llvm::ArrayRef<unsigned>;

/// How an all-reduce is run.
enum class AllReduceAlgo {
  /// One ring over the whole group: 2(n-1) rounds of L/n bytes.
  Ring,
  /// Reduce-scatter inside each node, all-reduce across nodes (one ring per
  /// local rank, all at once), all-gather inside each node.
  Hierarchical,
  /// NCCL's double binary tree: a chain inside each node into its first
  /// member, two complementary binary trees over the nodes' first members
  /// (each carrying half the buffer); reduce up, then broadcast down.
  /// Latency grows with log2 of the node count, not with the group size.
  Tree,
};

/// How an all-gather or reduce-scatter of uneven shards is run.
enum class UnevenVariant {
  /// Every shard padded to the largest: a ring of (n-1) rounds of max_j B_j.
  Padded,
  /// One broadcast (or reduce) per shard, grouped: every ring link carries
  /// each shard once, without padding, at broadcast efficiency.
  Grouped,
};

/// Tunable constants of the collective model.
struct CollectiveOptions {
  /// Fraction of link bandwidth grouped broadcasts/reduces reach relative to
  /// a ring all-gather (assumption: NCCL's broadcast bus bandwidth is below
  /// its all-gather's; calibrate with weft-profile).
  double groupedEfficiency = 0.8;
};

/// Point-to-point send of `bytes` from `src` to `dst`.
double pointToPointSeconds(const ClusterSpec &spec, unsigned src, unsigned dst,
                           double bytes);

/// All-reduce of `bytes` (the full buffer on every device).
double allReduceSeconds(const ClusterSpec &spec, DeviceGroup group,
                        double bytes, AllReduceAlgo algo = AllReduceAlgo::Ring);

/// The cheapest algorithm for an all-reduce of `bytes` on `group` (ring on
/// ties, then hierarchical).
AllReduceAlgo fastestAllReduce(const ClusterSpec &spec, DeviceGroup group,
                               double bytes);

/// All-gather where device group[i] contributes `shardBytes[i]` and ends up
/// with all shards.
double allGatherSeconds(const ClusterSpec &spec, DeviceGroup group,
                        llvm::ArrayRef<double> shardBytes,
                        UnevenVariant variant = UnevenVariant::Padded,
                        const CollectiveOptions &options = {});

/// Reduce-scatter: the dual of allGatherSeconds; group[i] ends up with the
/// reduced shard of `shardBytes[i]` bytes.
double reduceScatterSeconds(const ClusterSpec &spec, DeviceGroup group,
                            llvm::ArrayRef<double> shardBytes,
                            UnevenVariant variant = UnevenVariant::Padded,
                            const CollectiveOptions &options = {});

/// All-to-all where group[i] sends `sendBytes[i]` split evenly over the n
/// members (the part for itself stays). One round with every pair at once.
double allToAllSeconds(const ClusterSpec &spec, DeviceGroup group,
                       llvm::ArrayRef<double> sendBytes);

/// Broadcast of `bytes` from group[rootIndex], pipelined along the ring.
double broadcastSeconds(const ClusterSpec &spec, DeviceGroup group,
                        unsigned rootIndex, double bytes);

/// The per-NIC load bound of an all-gather: each node of the group receives
/// every shard held outside it through its NIC, so the collective takes at
/// least max over nodes of (Σ shards outside the node) / NIC bandwidth.
/// Zero for a group inside one node.
double nicLoadSeconds(const ClusterSpec &spec, DeviceGroup group,
                      llvm::ArrayRef<double> shardBytes);

} // namespace weft

#endif // WEFT_COST_COLLECTIVE_H
