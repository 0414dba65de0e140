//===- PolicyUtil.h - Helpers shared by the policies -------------*- C++
//-*-===//

#ifndef WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H
#define WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H

#include "weft/Sched/Policy.h"

namespace weft {
namespace sched {

/// Steps/s of `job` with `count` GPUs of `type`, consolidated if it can run
/// so, else spread (0 if neither).
inline double bestPlacementRate(const PolicyInput &in, unsigned job,
                                unsigned type, unsigned count) {
  double rate = in.rates->rate(job, type, count, true);
  return rate > 0 ? rate : in.rates->rate(job, type, count, false);
}

/// Active jobs' indices into `in.active`, in arrival order.
std::vector<unsigned> byArrival(const PolicyInput &in);

/// The fraction of its time in the cluster a job has run: attained service
/// / (now - arrival), with at least one round in the denominator. Ordering
/// by it (smallest first) is a fair share: unlike least attained service, a
/// long job that has waited recovers its place, so none starves under load.
double servedFraction(const PolicyInput &in, const ActiveJob &job);

/// Gavel's round-based mechanism: turns per-(job, type) time fractions
/// `fractions[i][t]` (i indexes in.active) into one round's assignments.
/// Pairs are taken by priority = fraction / share of rounds received on
/// that type (never-served pairs first); every pair with a positive rate is
/// a candidate, so spare GPUs are not left idle.
std::vector<Assignment>
roundTimeFractions(const PolicyInput &in,
                   const std::vector<std::vector<double>> &fractions);

/// Keeps from `previous` the assignments of jobs still active.
std::vector<Assignment> keepActive(const PolicyInput &in,
                                   const std::vector<Assignment> &previous);

/// Active jobs grouped by (rate class, weight): identical jobs. By symmetry
/// and convexity Gavel's LPs have an optimum giving identical jobs identical
/// fractions, so they are solved over groups (with multiplicities), which
/// keeps the LP at (#job classes x #GPU types) however many jobs wait.
struct JobGroups {
  /// Group of each active index.
  std::vector<unsigned> groupOf;
  /// One representative active index per group, and the group's size.
  std::vector<unsigned> representative, size;
};
JobGroups groupIdenticalJobs(const PolicyInput &in);

/// Builds the max-min fairness LP over time fractions (Gavel, OSDI'20 §4.1)
/// and solves it. With `agnostic`, every feasible type counts as equally
/// fast (Gavel's heterogeneity-agnostic baseline). Adds solve time to
/// `seconds`.
llvm::Expected<std::vector<std::vector<double>>>
solveMaxMinFractions(const PolicyInput &in, bool agnostic, double &seconds);

/// The heterogeneity-aware policies' normaliser: the job's rate with its
/// time split over types in proportion to their capacity (Gavel's X^equal).
double equalShareRate(const PolicyInput &in, unsigned job);

std::unique_ptr<Policy> createFifo();
std::unique_ptr<Policy> createMaxMinAgnostic();
std::unique_ptr<Policy> createGavelMaxMin();
std::unique_ptr<Policy> createGavelThroughput();
std::unique_ptr<Policy> createHadar(const PolicyOptions &opts);
std::unique_ptr<Policy> createCrius();
std::unique_ptr<Policy> createRubick(const PolicyOptions &opts);

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H
