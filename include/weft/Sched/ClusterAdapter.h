//===- ClusterAdapter.h - SchedCluster from a ClusterSpec --------*- C++
//-*-===//
//
// The one place that reads lib/Cluster's types. Device types become GPU
// types; each is mapped to an oracle GPU type by the equivalence table of
// docs/Scheduler.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_CLUSTERADAPTER_H
#define WEFT_SCHED_CLUSTERADAPTER_H

#include "weft/Sched/SchedCluster.h"
#include "weft/Sched/ThroughputOracle.h"

namespace weft {
struct ClusterSpec;
namespace sched {

/// Builds the scheduler's view of `spec`, mapping every device type onto one
/// of `oracle`'s GPU types.
llvm::Expected<SchedCluster> adaptCluster(const ClusterSpec &spec,
                                          const ThroughputOracle &oracle);

/// Loads `arg`: an inline description ("gpus:...") or a cluster spec file.
llvm::Expected<SchedCluster> loadSchedCluster(llvm::StringRef arg,
                                              const ThroughputOracle &oracle);

/// Maps a device type (catalog name, Gavel name and FP32 TFLOPS) to an oracle
/// GPU type and a speed factor. Exposed for tests and documentation.
llvm::Expected<std::pair<std::string, double>>
mapGpuType(llvm::StringRef name, llvm::StringRef gavelName, double fp32Tflops,
           const ThroughputOracle &oracle);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_CLUSTERADAPTER_H
