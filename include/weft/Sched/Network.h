//===- Network.h - Network contention between spread jobs -------*- C++ -*-===//
//
// Jobs spread over nodes send their gradient traffic over NICs and, with a
// leaf/spine topology, over leaf uplinks. A network model turns the jobs of
// one round into per-job slowdowns (iteration-time multipliers >= 1) that the
// simulator applies. `fair`: ECMP-hashed paths, links shared equally among
// flows. `crux` (SIGCOMM'24): GPU-intensity priorities, least-congested path
// selection, priorities compressed to K levels, strict priority sharing.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_NETWORK_H
#define WEFT_SCHED_NETWORK_H

#include "weft/Sched/Placement.h"
#include "weft/Sched/ThroughputOracle.h"
#include "llvm/Support/Error.h"
#include <memory>

namespace weft {
namespace sched {

/// One running job as the network sees it.
struct NetJob {
  unsigned job = 0;
  std::vector<NodeShare> shares;
  IterationProfile profile;
};

class NetworkModel {
public:
  virtual ~NetworkModel();
  virtual llvm::StringRef name() const = 0;
  /// Iteration-time multiplier (>= 1) of each job.
  virtual std::vector<double> slowdowns(llvm::ArrayRef<NetJob> jobs) = 0;
};

/// "fair" or "crux" (`levels` priority levels for crux).
llvm::Expected<std::unique_ptr<NetworkModel>>
createNetworkModel(llvm::StringRef mode, const SchedCluster &cluster,
                   unsigned levels = 8);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_NETWORK_H
