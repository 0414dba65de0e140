//===- ReconfigTest.cpp - Restart cost, type preferences, batch variants -===//
//
// The reconfiguration cost (per GPU, capped, carried over rounds, stalled
// restarts), per-policy flag values, a job's GPU types as a preference,
// batch-size variants at a fixed global batch, and the throughput CSV.
//
//===----------------------------------------------------------------------===//

#include "TestOracle.h"
#include "weft/Sched/Report.h"
#include "weft/Sched/RestartCost.h"
#include "weft/Sched/Simulator.h"
#include <cmath>

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
SchedCluster inlineCluster(const char *text) {
  auto parsed = parseInlineCluster(text);
  EXPECT_TRUE(bool(parsed));
  return std::move(*parsed);
}

Job makeJob(unsigned id, const char *type, double steps, double arrival = 0) {
  Job job;
  job.id = id;
  job.type = type;
  job.totalSteps = steps;
  job.arrivalS = arrival;
  return job;
}

SimResult run(const SchedCluster &cluster, const TableOracle &oracle,
              const Workload &workload, llvm::StringRef policyName,
              const SimOptions &options, const RateOptions &rateOptions = {}) {
  RateModel rates(cluster, oracle, workload.jobs, rateOptions);
  auto policy = createPolicy(policyName, {});
  EXPECT_TRUE(bool(policy));
  auto result = simulate(workload, cluster, rates, **policy, options);
  EXPECT_TRUE(bool(result)) << message(result.takeError());
  return std::move(*result);
}

/// M's batch-size variants: per-GPU steps/s at 1 and 2 GPUs.
const char *kVariantTable = R"json({"v100": {
  "('M (batch size 64)', 1)": {"null": 5.5},
  "('M (batch size 32)', 1)": {"null": 10.0},
  "('M (batch size 32)', 2)": {"null": 18.0},
  "('M (batch size 16)', 2)": {"null": 16.0}}})json";
} // namespace

TEST(Reconfig, CostPerGpuWithCap) {
  RestartCost cost{10, 5, 30};
  EXPECT_DOUBLE_EQ(cost.seconds(1), 15);
  EXPECT_DOUBLE_EQ(cost.seconds(4), 30);
  EXPECT_DOUBLE_EQ(cost.seconds(8), 30);
  EXPECT_DOUBLE_EQ((RestartCost{10, 5}).seconds(8), 50);
}

// A on two one-GPU V100 nodes (10 steps/s, 3600 s of work). Its node fails
// at 180 s: back to step 0, restarted at 360 s on the other node, where it
// first pays the restart cost: 360 + cost + 3600.
TEST(Reconfig, RestartCostIsChargedAndCarriedOver) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=2,per-node=1");
  Workload workload;
  workload.jobs = {makeJob(0, "A", 36000)};
  struct Case {
    double base, perGpu, cap, finish;
  };
  // 100 + 50; 500 (more than a 360 s round: carried over); 500 capped at
  // 200.
  for (Case c : {Case{100, 50, INFINITY, 4110}, Case{500, 0, INFINITY, 4460},
                 Case{500, 0, 200, 4160}}) {
    SimOptions options;
    options.restartCostS = c.base;
    options.restartCostPerGpuS = c.perGpu;
    options.restartCostCapS = c.cap;
    options.checkInvariants = true;
    SimResult probe = run(cluster, *oracle, workload, "fifo", options);
    // Fail the node the job takes first (node 1: best fit ties go to the
    // later node).
    options.failures = {{1, 180}};
    SimResult r = run(cluster, *oracle, workload, "fifo", options);
    ASSERT_EQ(r.jobs[0].status, JobStatus::Finished);
    EXPECT_NEAR(probe.jobs[0].finishS, 3600, 1e-6);
    EXPECT_NEAR(r.jobs[0].finishS, c.finish, 1e-6) << c.base << " " << c.cap;
    EXPECT_EQ(r.jobs[0].restarts, 1u);
    EXPECT_EQ(r.jobs[0].stalledRestarts, 0u);
  }
}

// Two A jobs time-share one V100 under gavel-maxmin, swapping every round.
// A restart of 500 s never fits in a 360 s round before the job is swapped
// out again: after their first rounds neither progresses, every restart is
// cut short, and both are left unfinished. At 10 s both finish.
TEST(Reconfig, RestartsLongerThanARoundStallJobs) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=1");
  Workload workload;
  workload.jobs = {makeJob(0, "A", 36000), makeJob(1, "A", 36000)};
  SimOptions options;
  options.maxTimeS = 20 * 3600;
  options.restartCostS = 500;
  SimResult stalled = run(cluster, *oracle, workload, "gavel-maxmin", options);
  Workload copy = workload;
  PolicyStats stats = computeStats(stalled, copy);
  for (const JobRecord &r : stalled.jobs) {
    EXPECT_EQ(r.status, JobStatus::Unfinished);
    EXPECT_GT(r.stalledRestarts, 10u);
  }
  EXPECT_EQ(stats.stalledJobs, 2u);
  options.restartCostS = 10;
  SimResult fine = run(cluster, *oracle, workload, "gavel-maxmin", options);
  for (const JobRecord &r : fine.jobs) {
    EXPECT_EQ(r.status, JobStatus::Finished);
    EXPECT_EQ(r.stalledRestarts, 0u);
  }
}

TEST(Reconfig, PerPolicyValues) {
  auto value = parsePerPolicyValue("restart-cost", "10,crius=30", 0);
  ASSERT_TRUE(bool(value)) << message(value.takeError());
  EXPECT_DOUBLE_EQ(value->get("crius"), 30);
  EXPECT_DOUBLE_EQ(value->get("fifo"), 10);
  auto onlyOne = parsePerPolicyValue("restart-cost", "rubick=5", 7);
  ASSERT_TRUE(bool(onlyOne));
  EXPECT_DOUBLE_EQ(onlyOne->get("crius"), 7);
  EXPECT_DOUBLE_EQ(onlyOne->get("rubick"), 5);
  auto none = parsePerPolicyValue("restart-cost-cap", "none,fifo=60", 0, true);
  ASSERT_TRUE(bool(none));
  EXPECT_TRUE(std::isinf(none->get("crius")));
  EXPECT_DOUBLE_EQ(none->get("fifo"), 60);
  for (const char *bad : {"-1", "crius=-1", "x", "foo=3", "crius=1,crius=2",
                          "1,2", "none", "=3", "inf"}) {
    auto parsed = parsePerPolicyValue("restart-cost", bad, 0);
    ASSERT_FALSE(bool(parsed)) << bad;
    EXPECT_NE(message(parsed.takeError()).find("--restart-cost"),
              std::string::npos);
  }
}

// A prefers K80s. Hard: it cannot use the V100. Prefer: the policies see
// the V100 at half its rate (5 steps/s against the K80's 1) and the job runs
// there at its true 10 steps/s.
TEST(Reconfig, GpuTypesAsPreference) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=1,k80=1");
  unsigned v100 = cluster.findType("v100"), k80 = cluster.findType("k80");
  Workload workload;
  workload.jobs = {makeJob(0, "A", 36000)};
  workload.jobs[0].allowedTypes = {"k80"};
  RateModel hard(cluster, *oracle, workload.jobs);
  EXPECT_EQ(hard.rate(0, v100, 1, true), 0.0);
  EXPECT_EQ(hard.progressRate(0, v100, 1, true), 0.0);
  RateOptions prefer;
  prefer.request = TypeRequest::Prefer;
  RateModel soft(cluster, *oracle, workload.jobs, prefer);
  EXPECT_DOUBLE_EQ(soft.rate(0, v100, 1, true), 5.0);
  EXPECT_DOUBLE_EQ(soft.progressRate(0, v100, 1, true), 10.0);
  EXPECT_DOUBLE_EQ(soft.rate(0, k80, 1, true), 1.0);
  EXPECT_EQ(soft.bestType(0), int(v100));
  SimOptions options;
  options.restartCostS = 0;
  SimResult r =
      run(cluster, *oracle, workload, "gavel-maxmin", options, prefer);
  ASSERT_EQ(r.jobs[0].status, JobStatus::Finished);
  EXPECT_NEAR(r.jobs[0].finishS, 3600, 1e-6);
  EXPECT_EQ(parseTypeRequest("prefer"), TypeRequest::Prefer);
  EXPECT_FALSE(parseTypeRequest("soft"));
}

// M (batch size 32) on 2 GPUs has a global batch of 64. Shrunk to 1 GPU at
// that global batch it runs the batch-64 variant: 5.5 per-GPU steps of 64
// samples = 11 of its own 32-sample steps/s (not batch 32's 10). On 1 GPU
// grown to 2, batch 16 per GPU: 16 x 16 / 32 = 8 (not 18).
TEST(Reconfig, BatchVariantsAtFixedGlobalBatch) {
  auto oracle = TableOracle::parse(kVariantTable, "m.json");
  ASSERT_TRUE(bool(oracle)) << message(oracle.takeError());
  SchedCluster cluster = inlineCluster("gpus:v100=4");
  std::vector<Job> jobs = {makeJob(0, "M (batch size 32)", 100),
                           makeJob(1, "M (batch size 32)", 100)};
  jobs[0].scale = 2;
  RateModel global(cluster, **oracle, jobs, ElasticBatch::Global);
  EXPECT_DOUBLE_EQ(global.rate(0, 0, 1, true), 11.0);
  EXPECT_DOUBLE_EQ(global.rate(0, 0, 2, true), 18.0);
  EXPECT_DOUBLE_EQ(global.rate(1, 0, 2, true), 8.0);
  EXPECT_DOUBLE_EQ(global.rate(1, 0, 1, true), 10.0);
  RateModel perGpu(cluster, **oracle, jobs, ElasticBatch::PerGpu);
  EXPECT_DOUBLE_EQ(perGpu.rate(1, 0, 2, true), 36.0);
  EXPECT_DOUBLE_EQ(samplesPerStep("M (batch size 32)"), 32);
  EXPECT_DOUBLE_EQ(samplesPerStep("CycleGAN"), 1);
}

// M (batch size 32) alone on a V100: 10 steps/s = 320 samples/s for 720 s.
// Windows of 360 s: 320, 320, then the window holding its finish at 720 s.
TEST(Reconfig, ThroughputCsv) {
  auto oracle = TableOracle::parse(kVariantTable, "m.json");
  ASSERT_TRUE(bool(oracle));
  SchedCluster cluster = inlineCluster("gpus:v100=1");
  Workload workload;
  workload.jobs = {makeJob(0, "M (batch size 32)", 7200)};
  SimResult r = run(cluster, **oracle, workload, "fifo", SimOptions());
  std::string text;
  llvm::raw_string_ostream os(text);
  printThroughputCsv({r}, workload, 360, os);
  EXPECT_EQ(os.str(),
            "policy,window_start_h,window_end_h,samples_per_s,jobs_finished\n"
            "fifo,0.0000,0.1000,320.000,0\n"
            "fifo,0.1000,0.2000,320.000,0\n"
            "fifo,0.2000,0.3000,0.000,1\n");
  PolicyStats stats = computeStats(r, workload);
  EXPECT_NEAR(stats.avgSamplesPerS, 320, 1e-9);
}
