//===- Network.h - Time of concurrent transfers on a cluster -----*- C++
//-*-===//
//
// The alpha-beta model every collective is built from. A *round* is a set of
// transfers that run at the same time; it takes the largest latency of its
// transfers plus, for every link resource, the bytes crossing it divided by
// its capacity, taking the most loaded resource. Resources: each device's
// intra-node link (out and in), each node's NIC (out and in) and, with a
// leaf/spine topology, each leaf's uplink (out and in). The NIC term is the
// per-NIC load of docs/Design.md §5.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_NETWORK_H
#define WEFT_COST_NETWORK_H

#include "weft/Cluster/ClusterSpec.h"
#include "llvm/ADT/ArrayRef.h"

namespace weft {

/// `bytes` sent from device `src` to device `dst`.
struct Transfer {
  unsigned src = 0, dst = 0;
  double bytes = 0;
};

/// One-way latency between two devices in seconds: the node's intra-node
/// latency inside a node; the larger NIC latency of the two nodes between
/// nodes, plus the spine latency when their leaves differ. 0 for src == dst.
double linkLatency(const ClusterSpec &spec, unsigned src, unsigned dst);

/// Seconds of the bandwidth term of a round: max over resources of bytes
/// through it / its capacity. Transfers to self cost nothing.
double roundBandwidthSeconds(const ClusterSpec &spec,
                             llvm::ArrayRef<Transfer> transfers);

/// roundSeconds of the round where every member group[i] sends
/// sendBytes[i] / n to every other member (an all-to-all), without storing
/// its n² transfers.
double allPairsRoundSeconds(const ClusterSpec &spec,
                            llvm::ArrayRef<unsigned> group,
                            llvm::ArrayRef<double> sendBytes);

/// Seconds of one round: max latency + roundBandwidthSeconds.
double roundSeconds(const ClusterSpec &spec,
                    llvm::ArrayRef<Transfer> transfers);

} // namespace weft

#endif // WEFT_COST_NETWORK_H
