//===- Report.h - Statistics, tables, report.json, jobs.csv, SVGs -*- C++ -*-//
//
// docs/Scheduler.md#report describes every figure and file.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_REPORT_H
#define WEFT_SCHED_REPORT_H

#include "weft/Sched/Simulator.h"
#include "llvm/Support/raw_ostream.h"

namespace weft {
namespace sched {

/// One policy's figures over the measured jobs.
struct PolicyStats {
  std::string policy;
  unsigned measured = 0, finished = 0, unfinished = 0, rejected = 0;
  /// Job completion time (finish - arrival) in hours over finished measured
  /// jobs.
  double avgJctH = 0, p50JctH = 0, p99JctH = 0;
  /// Last completion - first arrival, all jobs, hours.
  double makespanH = 0;
  /// First start - arrival, measured jobs that started, hours.
  double avgQueueH = 0;
  /// Useful GPU-seconds / healthy GPU-seconds (network slowdown excluded).
  double gpuUtilization = 0;
  /// Allocated GPU-seconds / healthy GPU-seconds.
  double allocatedUtilization = 0;
  unsigned deadlinesMet = 0, deadlinesMissed = 0, deadlinesRejected = 0;
  unsigned restarts = 0;
  /// Restarts cut short before their cost was paid, and the jobs they hit.
  unsigned stalledRestarts = 0, stalledJobs = 0;
  /// Samples processed / (last completion - first arrival), all jobs.
  double avgSamplesPerS = 0;
  double solverS = 0, wallS = 0;
  unsigned solves = 0;
};

PolicyStats computeStats(const SimResult &result, const Workload &workload);

/// A fixed-width table, one row per policy, every figure with its unit.
void printStatsTable(llvm::ArrayRef<PolicyStats> stats, llvm::raw_ostream &os);

/// Writes DIR/report.json, DIR/jobs.csv, DIR/jct_cdf.svg and
/// DIR/utilization.svg.
llvm::Error writeReport(llvm::StringRef dir, llvm::ArrayRef<SimResult> results,
                        llvm::ArrayRef<PolicyStats> stats,
                        const Workload &workload);

/// The throughput report (`--report-csv`): per policy and window of
/// `windowS` seconds, samples processed per second and jobs finished
/// (docs/Scheduler.md#report).
void printThroughputCsv(llvm::ArrayRef<SimResult> results,
                        const Workload &workload, double windowS,
                        llvm::raw_ostream &os);
llvm::Error writeThroughputCsv(llvm::StringRef path,
                               llvm::ArrayRef<SimResult> results,
                               const Workload &workload, double windowS);

/// The SVG plots on their own (for tests).
std::string jctCdfSvg(llvm::ArrayRef<SimResult> results,
                      const Workload &workload);
std::string utilizationSvg(llvm::ArrayRef<SimResult> results);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_REPORT_H
