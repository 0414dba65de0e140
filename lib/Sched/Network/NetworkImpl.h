//===- NetworkImpl.h - Shared pieces of the network models ------*- C++ -*-===//

#ifndef WEFT_LIB_SCHED_NETWORK_NETWORKIMPL_H
#define WEFT_LIB_SCHED_NETWORK_NETWORKIMPL_H

#include "weft/Sched/Network.h"

namespace weft {
namespace sched {

/// One flow of a job: node `src` to node `dst` over `links`.
struct Flow {
  /// Index of the job in the slowdowns() argument.
  unsigned job;
  unsigned src, dst;
  std::vector<unsigned> links;
  /// Priority level; 0 is served first.
  unsigned level;
  /// Average rate the flow uses when uncontended, bytes/s (set by
  /// setDemands).
  double demand = 0;
};

/// NIC and leaf/spine links with capacities in bytes/s.
struct LinkGraph {
  explicit LinkGraph(const SchedCluster &cluster);
  /// Links from `src` to `dst` through spine `spine`.
  std::vector<unsigned> path(unsigned src, unsigned dst, unsigned spine) const;
  bool crossesSpine(unsigned src, unsigned dst) const;
  /// Rates (bytes/s) of `flows` under strict priority between levels and
  /// max-min sharing inside a level, no flow above its demand.
  std::vector<double> share(const std::vector<Flow> &flows) const;

  const SchedCluster &cluster;
  std::vector<double> capacity;
  unsigned spines = 0;
};

/// The ring flows of `job` (owner = its index); links not yet chosen.
std::vector<Flow> ringFlows(const NetJob &job, unsigned owner);

/// Communication alone per iteration (seconds) of each job, and each flow's
/// demand: bytes / (compute + communication alone), i.e. the average rate
/// of a job whose iterations alternate compute and communication.
std::vector<double> setDemands(const LinkGraph &graph,
                               llvm::ArrayRef<NetJob> jobs,
                               std::vector<Flow> &flows);

/// Iteration-time multipliers: a job whose flows get rate x below their
/// demand d runs d / x times slower (the network is its bottleneck).
std::vector<double> slowdownsFrom(const LinkGraph &graph,
                                  llvm::ArrayRef<NetJob> jobs,
                                  const std::vector<Flow> &flows,
                                  const std::vector<double> &rates);

std::unique_ptr<NetworkModel> createFairNetwork(const SchedCluster &cluster);
std::unique_ptr<NetworkModel> createCruxNetwork(const SchedCluster &cluster,
                                                unsigned levels);

/// Crux's priority compression: splits jobs already sorted by decreasing
/// GPU intensity into at most `levels` contiguous levels, maximising the
/// weight of contention edges between different levels (equivalently,
/// minimising the weight inside levels) by dynamic programming.
/// `weight[i][j]` (i < j) is the contention weight of jobs i and j.
std::vector<unsigned>
compressPriorities(const std::vector<std::vector<double>> &weight,
                   unsigned levels);

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_NETWORK_NETWORKIMPL_H
