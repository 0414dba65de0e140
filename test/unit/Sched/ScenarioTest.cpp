//===- ScenarioTest.cpp - Hand-computed scenarios, one or more per policy -===//
//
// Tiny clusters and jobs whose outcome can be worked out on paper; the
// expected numbers are derived in the comments from the rates in
// TestOracle.h, the 360 s round and the simulator's rules.
//
//===----------------------------------------------------------------------===//

#include "TestOracle.h"
#include "weft/Sched/Report.h"
#include "weft/Sched/Simulator.h"

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
struct Scenario {
  std::unique_ptr<TableOracle> oracle = tinyOracle();
  SchedCluster cluster;
  Workload workload;
  SimOptions options;
  /// The elastic scenarios below are computed with a fixed per-GPU batch.
  ElasticBatch elastic = ElasticBatch::PerGpu;

  explicit Scenario(const char *clusterText) {
    auto parsed = parseInlineCluster(clusterText);
    EXPECT_TRUE(bool(parsed));
    cluster = std::move(*parsed);
    options.restartCostS = 0;
    options.checkInvariants = true;
  }
  Job &add(const char *type, unsigned scale, double steps, double arrival) {
    Job job;
    job.id = workload.jobs.size();
    job.type = type;
    job.scale = scale;
    job.totalSteps = steps;
    job.arrivalS = arrival;
    workload.jobs.push_back(job);
    return workload.jobs.back();
  }
  SimResult run(llvm::StringRef policyName, PolicyOptions opts = {}) {
    RateModel rates(cluster, *oracle, workload.jobs, elastic);
    auto policy = createPolicy(policyName, opts);
    EXPECT_TRUE(bool(policy));
    auto result = simulate(workload, cluster, rates, **policy, options);
    EXPECT_TRUE(bool(result)) << message(result.takeError());
    return std::move(*result);
  }
};
} // namespace

// One V100 and one K80. Job A runs 10x faster on the V100 (10 vs 1 steps/s),
// job C 1.05x (2 vs 1.9). The heterogeneity-aware assignment is unique: A on
// the V100, C on the K80. A: 36000 steps / 10 = 3600 s; C: 6840 / 1.9 =
// 3600 s. The swapped assignment would take A 36000 s. gavel-throughput's
// fairness floor does not bind: C on the K80 gets 1.9 / 1.95 = 0.97 of its
// equal-share rate, above 3/4 of the max-min optimum (1). (Hadar makes the
// same choice at equal service, HadarPricesSteerToCheaperTypes, but then
// gives C, served on the slower K80, its turn on the V100: its order is by
// served fraction.)
TEST(Scenario, HeterogeneityAwarePoliciesPutTheGainerOnTheFastGpu) {
  Scenario s("gpus:v100=1,k80=1");
  s.add("A", 1, 36000, 0);
  s.add("C", 1, 6840, 0);
  SimResult r = s.run("gavel-throughput");
  EXPECT_NEAR(r.jobs[0].finishS, 3600, 1e-6);
  EXPECT_NEAR(r.jobs[1].finishS, 3600, 1e-6);
  EXPECT_EQ(r.jobs[0].restarts, 0u);
}

// Same jobs, but B listed first: FIFO is blind to speed and gives the first
// job the type with most free GPUs (tie -> first listed, the V100): B on
// V100 (3600 / 2 = 1800 s), A on the K80 (36000 s).
TEST(Scenario, FifoIsHeterogeneityAgnostic) {
  Scenario s("gpus:v100=1,k80=1");
  s.add("B", 1, 3600, 0);
  s.add("A", 1, 36000, 0);
  SimResult r = s.run("fifo");
  EXPECT_NEAR(r.jobs[0].finishS, 1800, 1e-6);
  EXPECT_NEAR(r.jobs[1].finishS, 36000, 1e-6);
}

// FIFO never preempts: job 1 (A, 5000 steps = 500 s on the V100) holds the
// only GPU; job 2 arrives at 100 s, is considered at the 360 s round, still
// blocked, starts at the 720 s round and needs 3600 / 10 = 360 s -> 1080 s.
TEST(Scenario, FifoDoesNotPreempt) {
  Scenario s("gpus:v100=1");
  s.add("A", 1, 5000, 0);
  s.add("A", 1, 3600, 100);
  SimResult r = s.run("fifo");
  EXPECT_NEAR(r.jobs[0].finishS, 500, 1e-6);
  EXPECT_NEAR(r.jobs[1].startS, 720, 1e-6);
  EXPECT_NEAR(r.jobs[1].finishS, 1080, 1e-6);
  PolicyStats stats = computeStats(r, s.workload);
  // JCTs 500 s and 980 s.
  EXPECT_NEAR(stats.avgJctH, (500.0 + 980.0) / 2 / 3600, 1e-9);
  EXPECT_NEAR(stats.makespanH, 1080.0 / 3600, 1e-9);
  EXPECT_NEAR(stats.avgQueueH, (0 + 620.0) / 2 / 3600, 1e-9);
}

// Max-min time sharing: two identical jobs (7200 steps, 720 s alone) on one
// V100 get x = 1/2 each and alternate rounds: A [0,360], A' [360,720],
// A [720,1080] -> done at 1080, A' [1080,1440] -> done at 1440.
TEST(Scenario, MaxMinAlternatesRounds) {
  for (const char *policy : {"maxmin-agnostic", "gavel-maxmin"}) {
    Scenario s("gpus:v100=1");
    s.add("A", 1, 7200, 0);
    s.add("A", 1, 7200, 0);
    SimResult r = s.run(policy);
    EXPECT_NEAR(r.jobs[0].finishS, 1080, 1e-6) << policy;
    EXPECT_NEAR(r.jobs[1].finishS, 1440, 1e-6) << policy;
    EXPECT_GT(r.solves, 0u) << policy;
  }
}

// With a 10 s restart cost the same alternation costs every resumed round
// 10 s: A runs [0,360] (3600 steps, first start is free), A' [360,720]
// (free), A resumes at 720 and does 3500 steps, so neither finishes by the
// times above and each restart is counted.
TEST(Scenario, RestartCostDelaysPreemptedJobs) {
  Scenario s("gpus:v100=1");
  s.add("A", 1, 7200, 0);
  s.add("A", 1, 7200, 0);
  s.options.restartCostS = 10;
  SimResult r = s.run("gavel-maxmin");
  EXPECT_GT(r.jobs[0].finishS, 1080);
  EXPECT_GT(r.jobs[1].finishS, 1440);
  EXPECT_GE(r.jobs[0].restarts + r.jobs[1].restarts, 2u);
}

// Gavel's max-min on the two-job heterogeneous case: the LP splits the V100
// 50/50 (see docs: (9a+1)/5.5 = (2-a)/1.5 at a = 1/2), and the
// heterogeneity-agnostic LP treats both GPUs as equal. Both finish; the
// aware policy finishes A (the gainer) no later than the agnostic one.
TEST(Scenario, AwareMaxMinBeatsAgnosticForTheGainer) {
  double finish[2];
  const char *policies[] = {"maxmin-agnostic", "gavel-maxmin"};
  for (unsigned i = 0; i < 2; ++i) {
    Scenario s("gpus:v100=1,k80=1");
    s.add("A", 1, 36000, 0);
    s.add("B", 1, 3600, 0);
    SimResult r = s.run(policies[i]);
    ASSERT_EQ(r.jobs[0].status, JobStatus::Finished);
    finish[i] = r.jobs[0].finishS;
  }
  EXPECT_LE(finish[1], finish[0]);
}

// Crius: E asks for 1 GPU; Cells range over 1..2 GPUs. On a 4-V100 node
// the joint allocation grows it to 2 GPUs (9.5 steps/s at twice the batch
// = 19 own steps/s, +90%). 19000 steps -> 1000 s.
TEST(Scenario, CriusGrowsTheCell) {
  Scenario s("gpus:v100=4");
  s.add("E", 1, 19000, 0);
  SimResult r = s.run("crius");
  EXPECT_NEAR(r.jobs[0].finishS, 1000, 1e-6);
}

// Rubick: E's curve on a V100: 1 GPU 10, 2 GPUs 19, 4 GPUs 19.2 own
// steps/s. 1 -> 2 adds 90% per GPU; 2 -> 4 adds 0.53% per GPU < 1% knee:
// it stops at 2 GPUs: 19000 steps -> 1000 s. With a 0.1% knee it grows to
// 4 GPUs: 19200 steps -> 1000 s as well, so use 19200 steps: 1010.5 s at 2
// GPUs vs 1000 s at 4.
TEST(Scenario, RubickStopsAtTheKnee) {
  Scenario s("gpus:v100=4");
  s.add("E", 1, 19200, 0);
  SimResult r = s.run("rubick");
  EXPECT_NEAR(r.jobs[0].finishS, 19200 / 19.0, 1e-6);
  PolicyOptions low;
  low.knee = 0.001;
  SimResult grown = s.run("rubick", low);
  EXPECT_NEAR(grown.jobs[0].finishS, 1000, 1e-6);
}

// Rubick gives a guaranteed job the smallest Cell that meets its rate: E
// needs 15 own steps/s: 1 GPU gives 10, 2 GPUs 19 -> 2 GPUs even though a
// best-effort job arrived earlier and takes 1 GPU first in arrival order.
TEST(Scenario, RubickServesGuaranteesFirst) {
  Scenario s("gpus:v100=2");
  s.add("A", 1, 3600, 0);
  Job &g = s.add("E", 1, 19000, 0);
  g.guaranteedRate = 15;
  SimResult r = s.run("rubick");
  EXPECT_NEAR(r.jobs[1].finishS, 1000, 1e-6);
  // A waits for the guaranteed job: starts in the round after 1000 s.
  EXPECT_NEAR(r.jobs[0].startS, 1080, 1e-6);
}

// HadarE forks A over both GPU types: 10 + 1 = 11 steps/s; 11000 steps ->
// 1000 s (vs 1100 s on the V100 alone).
TEST(Scenario, HadarForkSumsCopies) {
  Scenario s("gpus:v100=1,k80=1");
  s.add("A", 1, 11000, 0);
  PolicyOptions fork;
  fork.fork = true;
  SimResult r = s.run("hadar", fork);
  EXPECT_EQ(r.policy, "hadar-fork");
  EXPECT_NEAR(r.jobs[0].finishS, 1000, 1e-6);
  SimResult plain = s.run("hadar");
  EXPECT_NEAR(plain.jobs[0].finishS, 1100, 1e-6);
}

// Hadar's prices steer: two V100s and two K80s; C0, C1 (C: 2.0 vs 1.9
// steps/s, utility 0.95 on a K80) come first, then A (10 vs 1). Prices
// p(y) = (L/2)(2/L)^y with L = 0.1 (A on a K80): C0 takes a V100
// (1 - 0.05 > 0.95 - 0.05); with one V100 taken its price is
// 0.05 * 20^0.5 = 0.224, so C1 takes a K80 (0.95 - 0.05 > 1 - 0.224);
// A gets the last V100: 36000 steps / 10 = 3600 s. Greedy best-type
// choice would have put A on a K80 (36000 s). In later rounds C1, served on
// the K80 at 0.95 of its V100 speed, bids first and takes a V100 from C0,
// and so on in turn: C0 and C1 finish between the V100's 950 s and the
// K80's 1000 s.
TEST(Scenario, HadarPricesSteerToCheaperTypes) {
  Scenario s("gpus:v100=2,k80=2,per-node=1");
  s.add("C", 1, 1900, 0);
  s.add("C", 1, 1900, 0);
  s.add("A", 1, 36000, 0);
  SimResult r = s.run("hadar");
  EXPECT_NEAR(r.jobs[2].finishS, 3600, 1e-6);
  for (unsigned c = 0; c < 2; ++c) {
    EXPECT_GT(r.jobs[c].finishS, 950 - 1e-6);
    EXPECT_LT(r.jobs[c].finishS, 1000 + 1e-6);
  }
}

// A job larger than the cluster is rejected at arrival and reported.
TEST(Scenario, JobLargerThanClusterIsRejected) {
  Scenario s("gpus:v100=4,k80=4");
  s.add("Big", 8, 100, 0);
  s.add("A", 1, 100, 0);
  for (const char *policy : {"fifo", "maxmin-agnostic", "gavel-maxmin",
                             "gavel-throughput", "hadar", "crius", "rubick"}) {
    SimResult r = s.run(policy);
    EXPECT_EQ(r.jobs[0].status, JobStatus::Rejected) << policy;
    EXPECT_NE(r.jobs[0].rejectReason.find("needs 8 GPUs"), std::string::npos);
    EXPECT_EQ(r.jobs[1].status, JobStatus::Finished) << policy;
    PolicyStats stats = computeStats(r, s.workload);
    EXPECT_EQ(stats.rejected, 1u);
  }
}

// Deadline admission on one V100: job 0 (A, 36000 steps = 1 h) runs; job 1
// (A, 3600 steps = 360 s) arrives at 0 with a 600 s deadline: the queue
// ahead holds 3600 GPU-s, so the estimate is 3600 + 360 > 600 -> rejected.
// Job 2 with a 5 h deadline is admitted and meets it.
TEST(Scenario, DeadlineAdmission) {
  Scenario s("gpus:v100=1");
  s.options.deadlines = true;
  s.add("A", 1, 36000, 0);
  s.add("A", 1, 3600, 0).deadlineS = 600;
  s.add("A", 1, 3600, 0).deadlineS = 5 * 3600;
  SimResult r = s.run("fifo");
  EXPECT_EQ(r.jobs[1].status, JobStatus::Rejected);
  EXPECT_NE(r.jobs[1].rejectReason.find("deadline"), std::string::npos);
  EXPECT_EQ(r.jobs[2].status, JobStatus::Finished);
  PolicyStats stats = computeStats(r, s.workload);
  EXPECT_EQ(stats.deadlinesRejected, 1u);
  EXPECT_EQ(stats.deadlinesMet, 1u);
  EXPECT_EQ(stats.deadlinesMissed, 0u);
  // Without admission control the tight job is admitted and misses.
  s.options.deadlines = false;
  PolicyStats open = computeStats(s.run("fifo"), s.workload);
  EXPECT_EQ(open.deadlinesMissed, 1u);
  EXPECT_EQ(open.deadlinesRejected, 0u);
}

// Failure and checkpoints: two 1-GPU nodes, two identical jobs (20000 steps
// at 10 steps/s = 2000 s). v100-0 fails at 1000 s; checkpoints every 300 s
// of run time -> the job there saved 9000 steps at 900 s and loses 1000.
// FIFO keeps the other job on v100-1 until it finishes at 2000 s; the
// victim restarts at the 2160 s round, pays 10 s, and needs 11000 steps
// (1100 s): done at 3270 s.
TEST(Scenario, FailureRestartsFromCheckpoint) {
  Scenario s("gpus:v100=2,per-node=1");
  s.options.restartCostS = 10;
  s.options.checkpointEveryS = 300;
  s.options.failures.push_back({0, 1000});
  s.add("A", 1, 20000, 0);
  s.add("A", 1, 20000, 0);
  SimResult r = s.run("fifo");
  double a = r.jobs[0].finishS, b = r.jobs[1].finishS;
  EXPECT_NEAR(std::min(a, b), 2000, 1e-6);
  EXPECT_NEAR(std::max(a, b), 3270, 1e-6);
  EXPECT_NEAR(r.jobs[0].lostSteps + r.jobs[1].lostSteps, 1000, 1e-6);
  EXPECT_EQ(r.jobs[0].restarts + r.jobs[1].restarts, 1u);
  // The failed node stops counting as available at 1000 s.
  EXPECT_NEAR(r.availableGpuS, 3270 + 1000, 1e-6);
}

TEST(Scenario, ParsesFailures) {
  auto cluster = parseInlineCluster("gpus:v100=8");
  ASSERT_TRUE(bool(cluster));
  auto f = parseFailure("v100-1@2h", *cluster);
  ASSERT_TRUE(bool(f));
  EXPECT_EQ(f->node, 1u);
  EXPECT_DOUBLE_EQ(f->timeS, 7200);
  for (const char *bad : {"v100-9@10", "v100-1", "v100-1@soon", "@5"}) {
    auto err = parseFailure(bad, *cluster);
    EXPECT_FALSE(bool(err)) << bad;
    if (!err)
      llvm::consumeError(err.takeError());
  }
}
