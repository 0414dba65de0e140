//===- Simulator.h - Round-based discrete-event cluster simulator -*- C++ -*-//
//
// Jobs arrive, wait, run in rounds (360 s by default) on gangs of GPUs of
// one type per part, get preempted or migrated (paying a checkpoint-restart
// cost), checkpoint periodically, and restart from their last checkpoint
// when a node fails. docs/Scheduler.md describes the model.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_SIMULATOR_H
#define WEFT_SCHED_SIMULATOR_H

#include "weft/Sched/Policy.h"
#include "weft/Sched/Workload.h"
#include <functional>
#include <limits>
#include <tuple>

namespace weft {
namespace sched {

class NetworkModel;

/// `--fail node@time`.
struct NodeFailure {
  unsigned node = 0;
  double timeS = 0;
};

/// Parses "NODE@SECONDS" (or "NODE@Nh" for hours) against `cluster`.
llvm::Expected<NodeFailure> parseFailure(llvm::StringRef text,
                                         const SchedCluster &cluster);

struct SimOptions {
  double roundS = 360;
  /// Seconds lost each time a job (re)starts after a preemption, migration,
  /// resize or failure (not on its first start): min(restartCostCapS,
  /// restartCostS + restartCostPerGpuS x GPUs). A cost longer than what is
  /// left of the round carries over to the next round while the job keeps
  /// its GPUs; a job that loses them first has wasted that restart.
  double restartCostS = 10;
  double restartCostPerGpuS = 0;
  double restartCostCapS = std::numeric_limits<double>::infinity();
  /// Periodic checkpoint interval of run time, seconds; 0 = only when
  /// preempted.
  double checkpointEveryS = 0;
  std::vector<NodeFailure> failures;
  /// Admit a job with a deadline only if some Cell can meet it.
  bool deadlines = false;
  /// Network contention model; null = no contention.
  NetworkModel *network = nullptr;
  /// Check the invariants every round (always on in debug builds).
  bool checkInvariants = false;
  /// Stop after this much simulated time, seconds.
  double maxTimeS = 1e12;
  /// Called once per round with (simulated seconds, finished jobs).
  std::function<void(double, unsigned)> onRound;
};

enum class JobStatus { Finished, Rejected, Unfinished };

/// The outcome of one job.
struct JobRecord {
  unsigned id = 0;
  JobStatus status = JobStatus::Unfinished;
  double startS = -1, finishS = -1;
  /// Restarts after preemption, migration or failure.
  unsigned restarts = 0;
  /// Restarts the job lost its GPUs in (preempted again or a failure)
  /// before the restart cost was paid: restarts that kept it from
  /// progressing.
  unsigned stalledRestarts = 0;
  /// Steps lost to failures.
  double lostSteps = 0;
  std::string rejectReason;
};

/// The outcome of one policy on one workload.
struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;
  /// (round start in seconds, fraction of healthy GPUs doing useful work).
  std::vector<std::pair<double, double>> utilization;
  /// GPU-seconds allocated, GPU-seconds computing (allocated / network
  /// slowdown), and healthy GPU-seconds, from the first arrival to the last
  /// completion.
  double allocatedGpuS = 0, usefulGpuS = 0, availableGpuS = 0;
  /// Samples processed in each round: (round start, round end, samples), a
  /// step of a job being its type's batch size in samples (samplesPerStep).
  /// Work later lost to a failure counts: it was computed.
  std::vector<std::tuple<double, double, double>> samples;
  /// Seconds of GPU time spent restarting (cost x GPUs held).
  double restartGpuS = 0;
  double solverS = 0;
  unsigned solves = 0;
  double wallS = 0;
  unsigned rounds = 0;
};

/// Per-job state during a simulation (exposed for the invariant checks).
struct JobState {
  bool arrived = false, admitted = false, done = false, rejected = false;
  double steps = 0;
  /// Steps saved at the last checkpoint: never decreases.
  double ckptSteps = 0;
  double runSinceCkptS = 0;
  std::vector<Part> parts;
  /// (node, GPUs) held this round.
  std::vector<std::pair<unsigned, unsigned>> placement;
  double rate = 0;
};

/// The simulator's state between rounds.
struct SimState {
  double nowS = 0;
  std::vector<JobState> jobs;
  /// GPUs in use per node.
  std::vector<unsigned> nodeUsed;
  std::vector<bool> nodeFailed;
  /// Checkpointed steps at the previous check (monotonicity).
  std::vector<double> lastCkpt;
};

/// No GPU double-booked, nothing on failed nodes, completed (checkpointed)
/// steps never decrease and never exceed the job's total. Internal error on
/// violation.
llvm::Error checkInvariants(const SimState &state, const SchedCluster &cluster,
                            llvm::ArrayRef<Job> jobs);

/// Every admitted job finished or is reported unfinished; rejected jobs have
/// a reason.
llvm::Error checkFinalInvariants(const SimResult &result,
                                 llvm::ArrayRef<Job> jobs);

/// Runs `policy` over `workload` on `cluster`.
llvm::Expected<SimResult> simulate(const Workload &workload,
                                   const SchedCluster &cluster,
                                   const RateModel &rates, Policy &policy,
                                   const SimOptions &options);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_SIMULATOR_H
