//===- FairnessTest.cpp - No policy starves a job; none picks a bad Cell --===//
//
// Hadar's served-fraction order (a long job is not overtaken by every
// arrival), gavel-throughput's fairness floor (a job worth little to total
// throughput still gets a share), and that no policy ever plans a part the
// oracle cannot run (the simulator refuses such a plan).
//
//===----------------------------------------------------------------------===//

#include "TestOracle.h"
#include "weft/Sched/Simulator.h"

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
SchedCluster inlineCluster(const char *text) {
  auto parsed = parseInlineCluster(text);
  EXPECT_TRUE(bool(parsed));
  return std::move(*parsed);
}

Job makeJob(unsigned id, const char *type, unsigned scale, double steps,
            double arrival) {
  Job job;
  job.id = id;
  job.type = type;
  job.scale = scale;
  job.totalSteps = steps;
  job.arrivalS = arrival;
  return job;
}

} // namespace

// One V100; A makes 10 steps/s. L (30 rounds of work) arrives at 0 and runs
// alone for 10 rounds; from 3600 s a job of 12 rounds arrives every 15
// rounds (80 % load on its own). In least-attained-service order each
// newcomer goes before L until it has caught up with L's service, so L runs
// little more than in the gaps: it finished at 41,040 s, after six jobs that
// arrived after it (the order hadar had; measured with this trace and
// table). By served fraction L's share recovers while it waits: it finishes
// at 27,360 s.
TEST(Fairness, HadarDoesNotStarveTheLongJob) {
  for (const char *name : {"hadar", "hadar-fork"}) {
    auto oracle = tinyOracle();
    SchedCluster cluster = inlineCluster("gpus:v100=1");
    Workload workload;
    workload.jobs.push_back(makeJob(0, "A", 1, 108000, 0));
    for (unsigned k = 0; k < 12; ++k)
      workload.jobs.push_back(makeJob(k + 1, "A", 1, 43200, 3600 + k * 5400.0));
    RateModel rates(cluster, *oracle, workload.jobs);
    auto policy = createPolicy(name, {});
    ASSERT_TRUE(bool(policy));
    SimOptions options;
    options.restartCostS = 0;
    options.checkInvariants = true;
    auto r = simulate(workload, cluster, rates, **policy, options);
    ASSERT_TRUE(bool(r)) << message(r.takeError());
    for (const JobRecord &job : r->jobs)
      ASSERT_EQ(job.status, JobStatus::Finished) << name;
    EXPECT_NEAR(r->jobs[0].finishS, 27360, 1e-6) << name;
  }
}

// Eight V100s on one node; nine 1-GPU A jobs of 10^5 s and one 8-GPU Big
// job of 1 h. Per GPU, Big is worth 1/8 of an A job's normalised
// throughput, so total throughput alone gives it x = 0 and it would wait
// until the A jobs finish (over 27 h). The floor guarantees every job 3/4
// of the max-min optimum: z* = 8/17 (9 x_A + 8 x_Big <= 8 with x_A = x_Big
// = z), so x_Big >= 6/17 and x_A = 88/153. Gavel's rounding takes never-
// served pairs first, by fraction: the A jobs in rounds 0 and 1 (Big does
// not fit beside the ninth), Big from round 2 (720 s).
TEST(Fairness, ThroughputFloorServesTheBigJob) {
  auto oracle = tinyOracle();
  SchedCluster cluster = inlineCluster("gpus:v100=8,per-node=8");
  Workload workload;
  for (unsigned id = 0; id < 9; ++id)
    workload.jobs.push_back(makeJob(id, "A", 1, 1e6, 0));
  workload.jobs.push_back(makeJob(9, "Big", 8, 3600, 0));
  RateModel rates(cluster, *oracle, workload.jobs);
  auto policy = createPolicy("gavel-throughput", {});
  ASSERT_TRUE(bool(policy));
  SimOptions options;
  options.restartCostS = 0;
  options.checkInvariants = true;
  auto r = simulate(workload, cluster, rates, **policy, options);
  ASSERT_TRUE(bool(r)) << message(r.takeError());
  EXPECT_NEAR(r->jobs[9].startS, 720, 1e-6);
  ASSERT_EQ(r->jobs[9].status, JobStatus::Finished);
  EXPECT_LT(r->jobs[9].finishS, 12 * 3600);
}

// F runs on a V100 at 1 and 4 GPUs, not at 2 (a zero figure: out of
// memory), and not on a K80 (no figure). G runs on both types at 1 GPU.
// Every policy's plans, checked by the simulator each round, never hold
// such a part; the jobs all finish.
TEST(Fairness, NoPolicyPlansAnInfeasiblePart) {
  auto oracle = TableOracle::parse(R"json({
      "v100": {"('F', 1)": {"null": 10.0}, "('F', 2)": {"null": 0.0},
               "('F', 4)": {"null": 12.0}, "('G', 1)": {"null": 5.0}},
      "k80": {"('G', 1)": {"null": 2.0}}})json",
                                   "f.json");
  ASSERT_TRUE(bool(oracle)) << message(oracle.takeError());
  SchedCluster cluster = inlineCluster("gpus:v100=4,k80=4");
  Workload workload;
  for (unsigned k = 0; k < 6; ++k) {
    workload.jobs.push_back(makeJob(2 * k, "F", 1, 18000, k * 500.0));
    workload.jobs.push_back(makeJob(2 * k + 1, "G", 1, 9000, k * 500.0));
  }
  for (const char *name :
       {"fifo", "maxmin-agnostic", "gavel-maxmin", "gavel-throughput", "hadar",
        "hadar-fork", "crius", "rubick"}) {
    RateModel rates(cluster, **oracle, workload.jobs);
    auto policy = createPolicy(name, {});
    ASSERT_TRUE(bool(policy));
    SimOptions options;
    options.checkInvariants = true;
    auto r = simulate(workload, cluster, rates, **policy, options);
    ASSERT_TRUE(bool(r)) << name << ": " << message(r.takeError());
    for (const JobRecord &job : r->jobs)
      EXPECT_EQ(job.status, JobStatus::Finished) << name << " job " << job.id;
  }
}

// The simulator's side of that guarantee: a policy that plans a part the
// oracle cannot run is an internal error, not a silently idle job.
TEST(Fairness, SimulatorRefusesAnInfeasiblePart) {
  struct OnK80 : Policy {
    llvm::StringRef name() const override { return "on-k80"; }
    llvm::Expected<std::vector<Assignment>>
    plan(const PolicyInput &in) override {
      std::vector<Assignment> plan;
      for (const ActiveJob &job : in.active)
        plan.push_back({job.id, {{unsigned(in.cluster->findType("k80")), 1}}});
      return plan;
    }
  };
  auto oracle = TableOracle::parse(
      R"json({"v100": {"('F', 1)": {"null": 10.0}}, "k80": {}})json", "f.json");
  ASSERT_TRUE(bool(oracle)) << message(oracle.takeError());
  SchedCluster cluster = inlineCluster("gpus:v100=1,k80=1");
  Workload workload;
  workload.jobs.push_back(makeJob(0, "F", 1, 100, 0));
  RateModel rates(cluster, **oracle, workload.jobs);
  OnK80 policy;
  auto r = simulate(workload, cluster, rates, policy, SimOptions());
  ASSERT_FALSE(bool(r));
  EXPECT_NE(message(r.takeError()).find("cannot run"), std::string::npos);
}
