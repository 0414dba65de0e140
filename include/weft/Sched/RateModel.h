//===- RateModel.h - Per-job rates on the cluster's GPU types ----*- C++
//-*-===//
//
// Answers "how many of its own steps per second does job j make with c GPUs
// of cluster type t, consolidated or spread", caching oracle look-ups per job
// class (type, scale, allowed GPU types). Elastic runs (c != scale) progress
// at throughput(c) (fixed global batch, the default; the oracle's figure for
// the job type's batch-size variant at the new per-GPU batch when it has
// one) or throughput(c) * c / scale (fixed per-GPU batch); see ElasticBatch.
// A job's requested GPU types are a restriction or a preference
// (TypeRequest).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_RATEMODEL_H
#define WEFT_SCHED_RATEMODEL_H

#include "weft/Sched/Job.h"
#include "weft/Sched/SchedCluster.h"
#include "weft/Sched/ThroughputOracle.h"
#include "llvm/ADT/ArrayRef.h"
#include <map>

namespace weft {
namespace sched {

/// How a job resized from its requested `scale` to `c` GPUs progresses.
enum class ElasticBatch {
  /// The global batch stays fixed: an iteration is the same work at any
  /// size, so the job makes throughput(c) of its own steps per second (the
  /// oracle's iteration rate at the new size). When the job type is
  /// "X (batch size b)" and the oracle has "X (batch size b')" for the
  /// per-GPU batch b' = b * scale / c at c GPUs, that variant's figure is
  /// used, converted to the job's steps: throughput'(c) * b' / b.
  Global,
  /// The per-GPU batch stays fixed: the global batch grows c / scale times,
  /// the job's work is a fixed number of samples, and it makes
  /// throughput(c) * c / scale of its own steps per second.
  PerGpu,
};

/// Parses "global" / "per-gpu".
std::optional<ElasticBatch> parseElasticBatch(llvm::StringRef text);

/// What a job's `allowedTypes` (a trace's gpu_types) mean.
enum class TypeRequest {
  /// The job runs on those types only.
  Hard,
  /// The job may run anywhere; policies see the other types' rates scaled
  /// by RateOptions::penalty, so they favour the requested ones, while the
  /// job progresses at the true rate wherever it runs.
  Prefer,
};

/// Parses "hard" / "prefer".
std::optional<TypeRequest> parseTypeRequest(llvm::StringRef text);

struct RateOptions {
  ElasticBatch elastic = ElasticBatch::Global;
  TypeRequest request = TypeRequest::Hard;
  /// With TypeRequest::Prefer: what a type outside a job's requested ones
  /// is worth to the policies, as a fraction of its rate, in (0, 1].
  double penalty = 0.5;
};

class RateModel {
public:
  RateModel(const SchedCluster &cluster, const ThroughputOracle &oracle,
            llvm::ArrayRef<Job> jobs,
            ElasticBatch elastic = ElasticBatch::Global);
  RateModel(const SchedCluster &cluster, const ThroughputOracle &oracle,
            llvm::ArrayRef<Job> jobs, const RateOptions &options);

  /// Steps/s of job `job` on `count` GPUs of type `type` as the policies
  /// see it (a type outside a preference discounted); 0 if infeasible, not
  /// allowed, or `count` is not a count the oracle knows.
  double rate(unsigned job, unsigned type, unsigned count,
              bool consolidated) const;
  /// Steps/s the job actually makes there (what the simulator runs it at).
  double progressRate(unsigned job, unsigned type, unsigned count,
                      bool consolidated) const;
  /// Steps/s of job `job` on a heterogeneous Cell, `parts` (cluster type,
  /// count) run as one plan (ThroughputOracle::throughputMixed), as the
  /// policies see it (the least worth of its types under a preference);
  /// 0 when a type is not allowed, or the oracle has no figure or says
  /// infeasible. Memoised per job class.
  double mixedRate(unsigned job,
                   llvm::ArrayRef<std::pair<unsigned, unsigned>> parts) const;
  /// Steps/s the job actually makes on that Cell.
  double
  mixedProgressRate(unsigned job,
                    llvm::ArrayRef<std::pair<unsigned, unsigned>> parts) const;
  /// GPU counts the job can run with (ascending).
  llvm::ArrayRef<unsigned> counts(unsigned job) const;
  /// The job's consolidated rate at its requested scale on its fastest
  /// allowed type (0 if it fits no type).
  double bestRate(unsigned job) const;
  /// Index of that fastest type, or -1.
  int bestType(unsigned job) const;
  /// Per-iteration profile for the network model (std::nullopt if none).
  std::optional<IterationProfile> profile(unsigned job, unsigned type,
                                          unsigned count) const;
  unsigned numTypes() const { return cluster.types.size(); }
  /// Jobs of one class (type, scale, allowed GPU types) have identical
  /// rates everywhere.
  unsigned classId(unsigned job) const { return classOf[job]; }
  /// Number of job classes (classId() < numClasses()).
  unsigned numClasses() const { return classes.size(); }
  const SchedCluster &getCluster() const { return cluster; }

private:
  struct JobClass {
    std::vector<unsigned> counts;
    /// [type][count index][consolidated] flattened: the policies' view and
    /// the true rates.
    std::vector<double> rates, progress;
    double best = 0;
    int bestType = -1;
    std::string jobType;
    unsigned scale = 1;
    /// Per type: 1 requested, the penalty, or 0 not allowed.
    std::vector<double> worth;
  };
  /// mixedProgressRate's memo: (class, parts) -> steps/s.
  mutable std::map<
      std::pair<unsigned, std::vector<std::pair<unsigned, unsigned>>>, double>
      mixed;
  ElasticBatch elastic = ElasticBatch::Global;
  const SchedCluster &cluster;
  const ThroughputOracle &oracle;
  std::vector<JobClass> classes;
  std::vector<unsigned> classOf;
  std::vector<std::string> jobTypeOf;
};

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_RATEMODEL_H
