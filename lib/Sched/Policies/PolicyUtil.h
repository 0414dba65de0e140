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

/// The fraction of its time in the cluster a job has run, counted in
/// seconds of its fastest type: attained service x the average speed of
/// the types it ran on (rate at its requested scale / its rate on its
/// fastest type, per round run) / (now - arrival), with at least one round
/// in the denominator. Ordering by it (smallest first) is a fair share:
/// unlike least attained service, a long job that has waited recovers its
/// place, so none starves under load; and an hour on a slow type counts as
/// less than an hour on a fast one, as in Gavel's max-min over normalised
/// throughput, so a job left on slow GPUs gets ahead for the fast ones.
double servedFraction(const PolicyInput &in, const ActiveJob &job);

/// Active jobs' indices into `in.active` by smallest served fraction, ties
/// in arrival order; with `deadlinesFirst`, deadline jobs come first,
/// earliest deadline first; with `guaranteedFirst`, guaranteed jobs
/// (guaranteed_rate > 0) come before best-effort ones.
std::vector<unsigned> byServedFraction(const PolicyInput &in,
                                       bool deadlinesFirst,
                                       bool guaranteedFirst);

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
std::unique_ptr<Policy> createWeft();

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H
