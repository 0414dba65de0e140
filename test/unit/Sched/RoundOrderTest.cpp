//===- RoundOrderTest.cpp - Gavel's round rounding against a full sort ----===//
//
// roundTimeFractions draws its (job, type) pairs from per-bucket heaps
// (MergedOrder) and stops once the cluster is full. These tests hold it to
// the plain definition it replaced: sort every feasible pair by priority
// (descending), then fraction (descending), then (job, type), and take the
// pairs in that order while the type has room and the job has no GPUs yet.
// Random fractions include LP round-offs (tiny positive and negative
// values) and zeros, random capacities and several job scales.
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"
#include "TestOracle.h"
#include "weft/Sched/RateModel.h"
#include <random>

using namespace weft::sched;
using namespace weft::sched::test;

namespace {

struct Pair {
  double priority, fraction;
  unsigned index, type;
};

bool pairBefore(const Pair &a, const Pair &b) {
  if (a.priority != b.priority)
    return a.priority > b.priority;
  if (a.fraction != b.fraction)
    return a.fraction > b.fraction;
  if (a.index != b.index)
    return a.index < b.index;
  return a.type < b.type;
}

/// The definition: every feasible pair sorted, taken greedily.
std::vector<Assignment> byFullSort(const PolicyInput &in,
                                   const std::vector<std::vector<double>> &x) {
  std::vector<Pair> pairs;
  for (unsigned i = 0; i < in.active.size(); ++i) {
    const ActiveJob &job = in.active[i];
    unsigned scale = in.jobs[job.id].scale;
    for (unsigned t = 0; t < in.capacity.size(); ++t) {
      if (scale > in.capacity[t] ||
          bestPlacementRate(in, job.id, t, scale) <= 0)
        continue;
      double received =
          job.roundsActive ? double(job.roundsOnType[t]) / job.roundsActive : 0;
      double priority = x[i][t] <= 1e-9 ? 0
                        : received <= 0 ? 1e9 * x[i][t]
                                        : x[i][t] / received;
      pairs.push_back({priority, x[i][t], i, t});
    }
  }
  std::sort(pairs.begin(), pairs.end(), pairBefore);
  std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
  std::vector<bool> taken(in.active.size(), false);
  std::vector<Assignment> plan;
  for (const Pair &p : pairs) {
    unsigned id = in.active[p.index].id;
    unsigned scale = in.jobs[id].scale;
    if (taken[p.index] || free[p.type] < scale)
      continue;
    taken[p.index] = true;
    free[p.type] -= scale;
    plan.push_back({id, {{p.type, scale}}});
  }
  return plan;
}

std::string describe(const std::vector<Assignment> &plan) {
  std::string out;
  for (const Assignment &a : plan)
    out += std::to_string(a.job) + "@" + std::to_string(a.parts[0].type) + "x" +
           std::to_string(a.parts[0].count) + " ";
  return out;
}

} // namespace

TEST(RoundOrder, MergedOrderIsTheSortedOrder) {
  std::mt19937 gen(7);
  for (unsigned trial = 0; trial < 200; ++trial) {
    unsigned n = gen() % 60;
    std::vector<double> key(n);
    for (double &k : key)
      k = double(gen() % 10); // many ties, broken by index
    auto before = [&](unsigned a, unsigned b) {
      return key[a] != key[b] ? key[a] > key[b] : a < b;
    };
    unsigned numBuckets = 1 + gen() % 5;
    std::vector<std::vector<unsigned>> buckets(numBuckets);
    for (unsigned i = 0; i < n; ++i)
      buckets[gen() % numBuckets].push_back(i);
    // Bucket `dropped` (if any) is dropped at its first item.
    int dropped = gen() % 2 ? int(gen() % numBuckets) : -1;
    std::vector<unsigned> bucketOf(n);
    for (unsigned b = 0; b < numBuckets; ++b)
      for (unsigned i : buckets[b])
        bucketOf[i] = b;
    std::vector<unsigned> want(n);
    for (unsigned i = 0; i < n; ++i)
      want[i] = i;
    std::sort(want.begin(), want.end(), before);
    bool seen = false;
    llvm::erase_if(want, [&](unsigned i) {
      if (int(bucketOf[i]) != dropped)
        return false;
      bool rest = seen;
      seen = true;
      return rest;
    });
    MergedOrder<decltype(before)> order(buckets, before);
    std::vector<unsigned> got;
    unsigned item, bucket;
    while (order.next(item, bucket)) {
      EXPECT_EQ(bucket, bucketOf[item]);
      got.push_back(item);
      if (int(bucket) == dropped)
        order.drop();
    }
    EXPECT_EQ(got, want) << "trial " << trial;
  }
}

TEST(RoundOrder, RoundTimeFractionsTakesPairsInTheSortedOrder) {
  auto oracle = tinyOracle();
  std::mt19937 gen(11);
  // A and B run at 1 GPU, E at 1, 2 and 4, Big only at 8 (TestOracle.h).
  const char *types[] = {"A", "B", "E", "E", "E", "Big"};
  const unsigned scales[] = {1, 1, 1, 2, 4, 8};
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned v100 = 1 + gen() % 12, k80 = 1 + gen() % 12;
    auto cluster = parseInlineCluster(
        ("gpus:v100=" + std::to_string(v100) + ",k80=" + std::to_string(k80))
            .c_str());
    ASSERT_TRUE(bool(cluster)) << message(cluster.takeError());
    unsigned n = 1 + gen() % 25;
    std::vector<Job> jobs(n);
    for (unsigned id = 0; id < n; ++id) {
      unsigned kind = gen() % 6;
      jobs[id].id = id;
      jobs[id].type = types[kind];
      jobs[id].scale = scales[kind];
      jobs[id].totalSteps = 1000;
    }
    RateModel rates(*cluster, *oracle, jobs);
    std::vector<ActiveJob> active(n);
    std::vector<std::vector<double>> x(n, std::vector<double>(2));
    for (unsigned i = 0; i < n; ++i) {
      active[i].id = i;
      active[i].roundsActive = gen() % 4;
      active[i].roundsOnType = {unsigned(gen() % (active[i].roundsActive + 1)),
                                unsigned(gen() % (active[i].roundsActive + 1))};
      for (double &f : x[i]) {
        switch (gen() % 6) {
        case 0:
          f = 0;
          break;
        case 1:
          f = 1e-12 * double(gen() % 5); // a positive round-off (or 0)
          break;
        case 2:
          f = -1e-12 * double(1 + gen() % 5); // a negative round-off
          break;
        default:
          f = double(gen() % 8) / 8; // ties on purpose
        }
      }
    }
    std::vector<unsigned> capacity = {v100, k80};
    PolicyInput in;
    in.cluster = &*cluster;
    in.rates = &rates;
    in.jobs = jobs;
    in.active = active;
    in.capacity = capacity;
    std::vector<Assignment> want = byFullSort(in, x);
    std::vector<Assignment> got = roundTimeFractions(in, x);
    ASSERT_EQ(describe(got), describe(want)) << "trial " << trial;
  }
}
