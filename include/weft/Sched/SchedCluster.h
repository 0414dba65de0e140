//===- SchedCluster.h - The scheduler's view of a cluster --------*- C++
//-*-===//
//
// Nodes with a GPU type, a GPU count, a NIC and a leaf switch: all the
// scheduler needs. Built from a ClusterSpec (ClusterAdapter.h) or from an
// inline description for tests ("gpus:v100=8,k80=4,per-node=4").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_SCHEDCLUSTER_H
#define WEFT_SCHED_SCHEDCLUSTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace weft {
namespace sched {

/// A GPU type of the cluster and how the oracle knows it.
struct GpuType {
  /// Cluster name ("V100", "A10", "v100").
  std::string name;
  /// Oracle type used for its throughputs ("v100").
  std::string oracleType;
  /// Throughput multiplier applied to the oracle's figures (1 when the
  /// oracle measured this type itself; see docs/Scheduler.md).
  double speedFactor = 1;
  /// GPUs of this type in the cluster.
  unsigned total = 0;
  /// Largest node of this type (GPUs).
  unsigned maxPerNode = 0;
};

/// One machine.
struct SchedNode {
  std::string name;
  /// Index into SchedCluster::types.
  unsigned type = 0;
  unsigned numGpus = 0;
  /// NIC bandwidth in Gbit/s.
  double nicGbps = 0;
  /// Index into SchedCluster::leaves, or -1 without a topology.
  int leaf = -1;
};

/// A leaf switch with its uplink bandwidth to the spine layer.
struct SchedLeaf {
  std::string name;
  double uplinkGbps = 0;
};

/// The cluster as the scheduler sees it.
struct SchedCluster {
  std::string name;
  std::vector<GpuType> types;
  std::vector<SchedNode> nodes;
  std::vector<SchedLeaf> leaves;
  /// Spine switches; a leaf's uplink is split evenly over them (paths).
  unsigned numSpines = 1;

  unsigned totalGpus() const;
  /// Index of the type named `name` (case-insensitive), or -1.
  int findType(llvm::StringRef name) const;
  /// Index of the node named `name`, or -1.
  int findNode(llvm::StringRef name) const;
  /// Fills GpuType::total and maxPerNode from the nodes.
  void recount();
};

/// Parses "gpus:TYPE=N[,TYPE=N...][,per-node=G][,nic=GBPS]": N GPUs of each
/// type in nodes of G GPUs (default 4) named "<type>-<i>", 10 Gbit/s NICs.
/// Types must be oracle GPU types; they map to themselves.
llvm::Expected<SchedCluster> parseInlineCluster(llvm::StringRef text);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_SCHEDCLUSTER_H
