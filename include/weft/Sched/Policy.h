//===- Policy.h - The interface every scheduling policy implements -*- C++ -*-//
//
// Once per round the simulator hands the policy the jobs that wait or run
// and the healthy GPUs per type; the policy answers with an ordered list of
// assignments (a GPU type and count per part; several parts = forked
// copies). The simulator places them in that order onto nodes, keeping a
// job where it ran when its assignment is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_POLICY_H
#define WEFT_SCHED_POLICY_H

#include "weft/Sched/Job.h"
#include "weft/Sched/RateModel.h"
#include "weft/Sched/SchedCluster.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <memory>

namespace weft {
namespace sched {

/// `count` GPUs of cluster type `type`.
struct Part {
  unsigned type = 0;
  unsigned count = 0;
  bool operator==(const Part &o) const {
    return type == o.type && count == o.count;
  }
};

/// What a job should run on this round.
struct Assignment {
  unsigned job = 0;
  std::vector<Part> parts;
  /// The parts (of different types) are one heterogeneous Cell: the job
  /// runs one plan over all of them at RateModel::mixedProgressRate, not
  /// as HadarE's copies whose rates add up.
  bool mixed = false;
};

/// A job that has arrived, was admitted and has not finished.
struct ActiveJob {
  unsigned id = 0;
  double remainingSteps = 0;
  /// Seconds the job has run so far (any GPUs).
  double attainedS = 0;
  /// Rounds since arrival and rounds received per GPU type.
  unsigned roundsActive = 0;
  std::vector<unsigned> roundsOnType;
  /// What it ran on last round (empty if it waited).
  std::vector<Part> current;
};

/// Everything a policy may look at.
struct PolicyInput {
  double nowS = 0;
  double roundS = 360;
  const SchedCluster *cluster = nullptr;
  const RateModel *rates = nullptr;
  llvm::ArrayRef<Job> jobs;
  llvm::ArrayRef<ActiveJob> active;
  /// Healthy GPUs per type.
  llvm::ArrayRef<unsigned> capacity;
  /// A job arrived or finished, or a node failed, since the last round.
  bool changed = true;
};

/// Options shared by policies.
struct PolicyOptions {
  /// HadarE: fork jobs into copies over several GPU types.
  bool fork = false;
  /// Rubick's knee: stop growing a job when one more GPU adds less than this
  /// fraction of its throughput.
  double knee = 0.01;
};

class Policy {
public:
  virtual ~Policy();
  virtual llvm::StringRef name() const = 0;
  /// The assignments for the coming round, most important first.
  /// Errors are internal (an LP the solver could not solve).
  virtual llvm::Expected<std::vector<Assignment>>
  plan(const PolicyInput &in) = 0;
  /// Wall time spent in LP solvers so far, seconds.
  virtual double solverSeconds() const { return 0; }
  /// Number of LP solves so far.
  virtual unsigned solves() const { return 0; }
  /// True when the policy runs jobs on GPU counts other than requested.
  virtual bool elastic() const { return false; }
};

/// Creates the policy `name` (see knownPolicies()).
llvm::Expected<std::unique_ptr<Policy>> createPolicy(llvm::StringRef name,
                                                     const PolicyOptions &opts);
/// "fifo, maxmin-agnostic, ...".
std::string knownPolicies();

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_POLICY_H
