//===- SubCluster.h - The cluster of one Cell ---------------------*- C++
//-*-===//
//
// A Cell's devices as a cluster spec of their own, built from the model
// cluster's device types and links: per type, nodes shaped like the type's
// largest node in the model cluster, packed (full nodes first, the rest in
// one smaller node), with that node's intra-node link and NIC. The
// leaf/spine topology is not kept (every node reaches every other at its
// NIC's speed): a scheduler places a Cell's nodes where it finds them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CELL_SUBCLUSTER_H
#define WEFT_CELL_SUBCLUSTER_H

#include "weft/Cell/Cell.h"
#include "weft/Cluster/ClusterSpec.h"

namespace weft {
namespace cell {

/// The sub-cluster of `devices` in `cluster`. Errors (bad input): a type
/// the cluster lacks, or more devices of a type than it has.
llvm::Expected<ClusterSpec> buildSubCluster(const ClusterSpec &cluster,
                                            const DeviceMultiset &devices);

/// Devices per type of `cluster` (name order).
DeviceMultiset devicesOf(const ClusterSpec &cluster);

} // namespace cell
} // namespace weft

#endif // WEFT_CELL_SUBCLUSTER_H
