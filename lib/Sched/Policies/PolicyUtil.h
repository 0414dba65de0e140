//===- PolicyUtil.h - Helpers shared by the policies -------------*- C++
//-*-===//

#ifndef WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H
#define WEFT_LIB_SCHED_POLICIES_POLICYUTIL_H

#include "weft/Sched/Policy.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <algorithm>

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
/// Without `bySpeed`, plain seconds of run time (any type).
double servedFraction(const PolicyInput &in, const ActiveJob &job,
                      bool bySpeed = true);

/// servedFraction() for many jobs of one round: each job class's speed per
/// type is computed once, not per job (the same figures).
class ServedFractions {
public:
  explicit ServedFractions(const PolicyInput &in);
  double operator()(const ActiveJob &job);

private:
  const PolicyInput &in;
  unsigned numTypes;
  /// rate / fastest rate per (class, type); negative: not computed yet.
  std::vector<double> speed;
};

/// Active jobs' indices into `in.active` by smallest served fraction, ties
/// in arrival order; with `deadlinesFirst`, deadline jobs come first,
/// earliest deadline first; with `guaranteedFirst`, guaranteed jobs
/// (guaranteed_rate > 0) come before best-effort ones.
std::vector<unsigned> byServedFraction(const PolicyInput &in,
                                       bool deadlinesFirst,
                                       bool guaranteedFirst);

/// Gavel's round-based mechanism: turns per-(job, type) time fractions
/// `fractionsOf(i)[t]` (i indexes in.active) into one round's assignments.
/// Pairs are taken by priority = fraction / share of rounds received on
/// that type (never-served pairs first), then by fraction, then in (job,
/// type) order; every pair with a positive rate is a candidate, so spare
/// GPUs are not left idle. Pairs are drawn from a heap until the cluster is
/// full: a round costs O(pairs + taken log pairs), not a sort of all pairs.
std::vector<Assignment> roundTimeFractions(
    const PolicyInput &in,
    llvm::function_ref<llvm::ArrayRef<double>(unsigned)> fractionsOf);
std::vector<Assignment>
roundTimeFractions(const PolicyInput &in,
                   const std::vector<std::vector<double>> &fractions);

/// Visits items in the order `before` (a strict total order over item
/// indices) lazily, as a merge of buckets (a partition of the items, e.g.
/// jobs by class), each a heap: taking the first k of n items costs
/// O(n + k log n) rather than a sort, and a bucket none of whose items can
/// be served any more is dropped whole (drop()), so a round stops once
/// every bucket is dropped or the cluster is full. Consumes `buckets`.
template <typename Before> class MergedOrder {
public:
  MergedOrder(std::vector<std::vector<unsigned>> &buckets, Before before)
      : buckets(buckets), before(before) {
    for (unsigned b = 0; b < buckets.size(); ++b) {
      if (buckets[b].empty())
        continue;
      std::make_heap(buckets[b].begin(), buckets[b].end(), itemAfter());
      heads.push_back(b);
    }
    std::make_heap(heads.begin(), heads.end(), headAfter());
  }
  /// The next item in order and its bucket; false when none is left.
  bool next(unsigned &item, unsigned &bucket) {
    requeue();
    if (heads.empty())
      return false;
    std::pop_heap(heads.begin(), heads.end(), headAfter());
    bucket = heads.back();
    heads.pop_back();
    std::vector<unsigned> &items = buckets[bucket];
    std::pop_heap(items.begin(), items.end(), itemAfter());
    item = items.back();
    items.pop_back();
    pending = bucket;
    return true;
  }
  /// Skips the rest of the bucket of the item next() returned last.
  void drop() { pending = -1; }

private:
  auto itemAfter() const {
    return [this](unsigned a, unsigned b) { return before(b, a); };
  }
  auto headAfter() const {
    return [this](unsigned a, unsigned b) {
      return before(buckets[b].front(), buckets[a].front());
    };
  }
  void requeue() {
    if (pending >= 0 && !buckets[pending].empty()) {
      heads.push_back(pending);
      std::push_heap(heads.begin(), heads.end(), headAfter());
    }
    pending = -1;
  }
  std::vector<std::vector<unsigned>> &buckets;
  Before before;
  std::vector<unsigned> heads;
  int pending = -1;
};

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

/// Time fractions of groups of identical jobs: x[g][t] for group g on type
/// t; every job of a group runs with its group's fractions.
struct GroupFractions {
  JobGroups groups;
  std::vector<std::vector<double>> x;
};

/// Job `id`'s rates on each type at its scale into `rate` (0 where it
/// cannot run; 1 where it can with `agnostic`), and returns their mean
/// weighted by the types' capacity over the types it can run on: the
/// max-min LP's normaliser e_j (0 if it can run nowhere).
double fairShareRates(const PolicyInput &in, unsigned id, bool agnostic,
                      std::vector<double> &rate);

/// Builds the max-min fairness LP over time fractions (Gavel, OSDI'20 §4.1)
/// and solves it. With `agnostic`, every feasible type counts as equally
/// fast (Gavel's heterogeneity-agnostic baseline). Adds solve time to
/// `seconds`; `minShare`, if given, receives the optimum z (the smallest
/// normalised effective throughput).
llvm::Expected<GroupFractions> solveMaxMinFractions(const PolicyInput &in,
                                                    bool agnostic,
                                                    double &seconds,
                                                    double *minShare = nullptr);

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
