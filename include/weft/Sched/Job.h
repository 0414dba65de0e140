//===- Job.h - A training job submitted to the scheduler ---------*- C++
//-*-===//
//
// A job is what a trace line describes: a model type at a batch size, the
// number of GPUs it asks for (Gavel's scale factor), how much work it has and
// when it arrives. docs/Scheduler.md describes every field.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_JOB_H
#define WEFT_SCHED_JOB_H

#include <optional>
#include <string>
#include <vector>

namespace weft {
namespace sched {

/// One training job.
struct Job {
  /// Dense id, in the order the workload lists jobs (0-based).
  unsigned id = 0;
  /// Oracle job type, e.g. "ResNet-18 (batch size 16)".
  std::string type;
  /// GPUs requested (Gavel's scale factor).
  unsigned scale = 1;
  /// Iterations to run at the requested scale. Elastic policies that run a
  /// job on c GPUs progress at throughput(c) * c / scale of these steps
  /// (the work is a fixed number of samples).
  double totalSteps = 0;
  /// Arrival time in seconds.
  double arrivalS = 0;
  /// Absolute deadline in seconds, if any.
  std::optional<double> deadlineS;
  /// Guaranteed throughput in steps/s (Rubick's SLA jobs); 0 = best effort.
  double guaranteedRate = 0;
  /// Priority weight (Gavel's); 1 by default.
  double weight = 1;
  /// GPU types (cluster type names) the job may use; empty = any.
  std::vector<std::string> allowedTypes;
  /// Where the job came from ("file:line" or "generator"), for messages.
  std::string origin;
};

/// Samples in one of the oracle's steps of job type `type`: N for a type
/// named "... (batch size N)" or, for the compiler oracle,
/// "MODEL[:OPTIONS];batch=N" (one iteration is the global batch), else 1
/// (Gavel's A3C, CycleGAN). Gavel's multi-GPU figures grow with the GPU count,
/// so a step is one GPU's iteration at that batch.
double samplesPerStep(const std::string &type);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_JOB_H
