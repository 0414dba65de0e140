//===- ElasticTest.cpp - Elastic rates, fair order, infeasible Cells ------===//
//
// The two elastic-batch readings of the oracle, the served-fraction order of
// crius and rubick (no starvation of a long job), and that no policy sizes a
// job onto a Cell the oracle marks infeasible (a zero figure: out of memory).
//
//===----------------------------------------------------------------------===//

#include "TestOracle.h"
#include "weft/Sched/Simulator.h"

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
std::vector<Job> oneJob(const char *type, unsigned scale, double steps) {
  Job job;
  job.type = type;
  job.scale = scale;
  job.totalSteps = steps;
  return {job};
}

SchedCluster inlineCluster(const char *text) {
  auto parsed = parseInlineCluster(text);
  EXPECT_TRUE(bool(parsed));
  return std::move(*parsed);
}

SimResult simulateOn(const SchedCluster &cluster, const TableOracle &oracle,
                     const Workload &workload, llvm::StringRef policyName) {
  RateModel rates(cluster, oracle, workload.jobs);
  auto policy = createPolicy(policyName, {});
  EXPECT_TRUE(bool(policy));
  SimOptions options;
  options.restartCostS = 0;
  options.checkInvariants = true;
  auto result = simulate(workload, cluster, rates, **policy, options);
  EXPECT_TRUE(bool(result)) << message(result.takeError());
  return std::move(*result);
}
} // namespace

// E (asked for 1 GPU) makes 9.5 iterations/s on 2 V100s. At a fixed global
// batch that is 9.5 of its own steps/s; at a fixed per-GPU batch each
// iteration is twice its batch: 19. At its requested scale both agree.
TEST(Elastic, GlobalAndPerGpuBatch) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=4");
  std::vector<Job> jobs = oneJob("E", 1, 100);
  RateModel global(cluster, *oracle, jobs, ElasticBatch::Global);
  RateModel perGpu(cluster, *oracle, jobs, ElasticBatch::PerGpu);
  EXPECT_DOUBLE_EQ(global.rate(0, 0, 2, true), 9.5);
  EXPECT_DOUBLE_EQ(perGpu.rate(0, 0, 2, true), 19.0);
  EXPECT_DOUBLE_EQ(global.rate(0, 0, 1, true), 10.0);
  EXPECT_DOUBLE_EQ(perGpu.rate(0, 0, 1, true), 10.0);
  EXPECT_EQ(parseElasticBatch("global"), ElasticBatch::Global);
  EXPECT_EQ(parseElasticBatch("per-gpu"), ElasticBatch::PerGpu);
  EXPECT_FALSE(parseElasticBatch("both"));
}

// One V100, job type A at 10 steps/s, 360 s rounds. L (10 rounds of work)
// runs alone from 0 to 2160 s (6 rounds). M (10 rounds) arrives at 1900 s
// and runs from 2160 s; X (1 round) arrives at 3000 s and runs 3240-3600 s.
// At 3600 s L has run 2160 of its 3600 s (0.60), M 1080 of 1700 s (0.64):
// L goes first and finishes its 4 rounds at 5040 s, M at 7560 s. Least
// attained service would pick M (1080 s < 2160 s) and finish L at 7560 s.
TEST(Elastic, ServedFractionDoesNotStarveTheLongJob) {
  for (const char *policy : {"crius", "rubick"}) {
    auto oracle = tinyOracle();
    SchedCluster cluster = inlineCluster("gpus:v100=1");
    Workload workload;
    for (auto [arrival, steps] :
         {std::pair{0.0, 36000.0}, {1900.0, 36000.0}, {3000.0, 3600.0}}) {
      Job job;
      job.id = workload.jobs.size();
      job.type = "A";
      job.totalSteps = steps;
      job.arrivalS = arrival;
      workload.jobs.push_back(job);
    }
    SimResult r = simulateOn(cluster, *oracle, workload, policy);
    EXPECT_NEAR(r.jobs[2].finishS, 3600, 1e-6) << policy;
    EXPECT_NEAR(r.jobs[0].finishS, 5040, 1e-6) << policy;
    EXPECT_NEAR(r.jobs[1].finishS, 7560, 1e-6) << policy;
  }
}

// F asks for 1 GPU and runs on 1 or 4; on 2 GPUs it does not fit memory (a
// zero figure). Crius's Cells span 1-2 GPUs, rubick's curve 1, 2, 4: both
// keep F on 1 GPU (10 steps/s, 36000 steps -> 3600 s) rather than a 2-GPU
// Cell, and rubick stops growing at the infeasible count.
TEST(Elastic, NoPolicySizesAJobOntoAnInfeasibleCell) {
  auto oracle = TableOracle::parse(R"json({"v100": {
      "('F', 1)": {"null": 10.0}, "('F', 2)": {"null": 0.0},
      "('F', 4)": {"null": 12.0}}})json",
                                   "f.json");
  ASSERT_TRUE(bool(oracle)) << message(oracle.takeError());
  SchedCluster cluster = inlineCluster("gpus:v100=4");
  for (const char *policy : {"crius", "rubick"}) {
    Workload workload;
    workload.jobs = oneJob("F", 1, 36000);
    RateModel rates(cluster, **oracle, workload.jobs);
    EXPECT_EQ(rates.rate(0, 0, 2, true), 0.0);
    SimResult r = simulateOn(cluster, **oracle, workload, policy);
    ASSERT_EQ(r.jobs[0].status, JobStatus::Finished) << policy;
    double finish = r.jobs[0].finishS;
    EXPECT_TRUE(std::abs(finish - 3600) < 1e-6 ||
                std::abs(finish - 3000) < 1e-6)
        << policy << " finished at " << finish;
  }
}

// Two A jobs (10x faster on a V100 than on a K80), both in the cluster for
// 7200 s and run for 3600 s: job 0 on the V100, job 1 on the K80. Counted
// in seconds of the fastest type job 1 was served a tenth as much, so it
// comes first and gets the V100 (crius, rubick, and hadar, whose jobs bid
// in that order). Counting plain seconds would tie them and give the V100
// to job 0 again (arrival order).
TEST(Elastic, ServedFractionWeighsTheTypesSpeed) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=1,k80=1");
  unsigned v100 = cluster.findType("v100"), k80 = cluster.findType("k80");
  std::vector<Job> jobs;
  for (unsigned id = 0; id < 2; ++id) {
    Job job;
    job.id = id;
    job.type = "A";
    job.totalSteps = 1e6;
    jobs.push_back(job);
  }
  RateModel rates(cluster, *oracle, jobs);
  std::vector<ActiveJob> active(2);
  for (unsigned id = 0; id < 2; ++id) {
    active[id].id = id;
    active[id].remainingSteps = 5e5;
    active[id].attainedS = 3600;
    active[id].roundsActive = 20;
    active[id].roundsOnType.assign(2, 0);
    active[id].roundsOnType[id == 0 ? v100 : k80] = 10;
  }
  std::vector<unsigned> capacity = {1, 1};
  PolicyInput in;
  in.nowS = 7200;
  in.cluster = &cluster;
  in.rates = &rates;
  in.jobs = jobs;
  in.active = active;
  in.capacity = capacity;
  for (const char *name : {"crius", "rubick", "hadar"}) {
    auto policy = createPolicy(name, {});
    ASSERT_TRUE(bool(policy));
    auto plan = (*policy)->plan(in);
    ASSERT_TRUE(bool(plan)) << message(plan.takeError());
    bool found = false;
    for (const Assignment &a : *plan)
      if (a.job == 1) {
        found = true;
        ASSERT_EQ(a.parts.size(), 1u) << name;
        EXPECT_EQ(a.parts[0].type, v100) << name;
      }
    EXPECT_TRUE(found) << name;
  }
}
