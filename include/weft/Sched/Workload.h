//===- Workload.h - Traces and workload generators ---------------*- C++
//-*-===//
//
// Three sources of jobs: Gavel's tab-separated traces (7-field legacy and
// 10-field formats), Gavel's continuous generator, and Weft's CSV format
// (docs/Scheduler.md). Every job type is checked against the oracle.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_WORKLOAD_H
#define WEFT_SCHED_WORKLOAD_H

#include "weft/Sched/Job.h"
#include "weft/Sched/ThroughputOracle.h"
#include "llvm/Support/Error.h"

namespace weft {
namespace sched {

/// A list of jobs plus the range of job ids whose statistics are reported.
struct Workload {
  std::vector<Job> jobs;
  /// Jobs with measureBegin <= id < measureEnd are measured.
  unsigned measureBegin = 0, measureEnd = ~0u;

  bool measured(unsigned id) const {
    return id >= measureBegin && id < measureEnd;
  }
};

/// Parameters of Gavel's continuous generator.
struct GeneratorParams {
  /// Arrival rate in jobs/hour.
  double ratePerHour = 1;
  unsigned numJobs = 100;
  uint64_t seed = 0;
  /// Measurement window [begin, end) of job ids; end 0 = all jobs.
  unsigned windowBegin = 0, windowEnd = 0;
};

/// Parses "gavel:rate=R,jobs=N,seed=S,window=A-B".
llvm::Expected<GeneratorParams> parseGeneratorSpec(llvm::StringRef text);

/// Gavel's generator: Poisson arrivals, job type uniform over the oracle's
/// types, duration 60*10^U(1.5,3) s (p=0.8) else 60*10^U(3,4) s on the
/// reference GPU type, GPUs 1/2/4/8 with p=0.7/0.1/0.15/0.05 (1 for types
/// that do not scale).
llvm::Expected<Workload> generateGavelWorkload(const GeneratorParams &params,
                                               const ThroughputOracle &oracle);

/// Parses a Gavel trace (7 or 10 tab-separated fields per line).
llvm::Expected<Workload> parseGavelTrace(llvm::StringRef text,
                                         llvm::StringRef fileName,
                                         const ThroughputOracle &oracle);

/// Parses Weft's CSV trace format.
llvm::Expected<Workload> parseCsvTrace(llvm::StringRef text,
                                       llvm::StringRef fileName,
                                       const ThroughputOracle &oracle);

/// Reads `path` and parses it by extension: ".csv" is Weft's format, anything
/// else a Gavel trace.
llvm::Expected<Workload> loadTrace(llvm::StringRef path,
                                   const ThroughputOracle &oracle);

/// The oracle GPU type durations are measured on ("v100" when known, else
/// the oracle's first type).
std::string referenceGpuType(const ThroughputOracle &oracle);

/// Checks that `type` at `scale` GPUs is known to the oracle; the error lists
/// the known types. `where` prefixes the message ("file:line").
llvm::Error checkJobType(const ThroughputOracle &oracle, llvm::StringRef type,
                         unsigned scale, llvm::StringRef where);

struct SchedCluster;

/// Checks that every job that names GPU types (`gpu_types`) can run on
/// `cluster`: at least one of its types is a type of the cluster. The error
/// (bad input) names the job's origin ("file:line"), the types it asks for
/// and those the cluster has.
llvm::Error checkAllowedTypes(const Workload &workload,
                              const SchedCluster &cluster);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_WORKLOAD_H
