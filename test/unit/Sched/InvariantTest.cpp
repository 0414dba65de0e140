//===- InvariantTest.cpp - Invariants over random traces with failures ---===//

#include "TestOracle.h"
#include "weft/Sched/Network.h"
#include "weft/Sched/Report.h"
#include "weft/Sched/Simulator.h"
#include <random>

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
std::unique_ptr<TableOracle> gavelOracle() {
  auto oracle =
      TableOracle::load(WEFT_DATA_DIR "/gavel/simulation_throughputs.json");
  EXPECT_TRUE(bool(oracle));
  return std::move(*oracle);
}
} // namespace

// Every policy, several seeds, random node failures, periodic checkpoints
// and the network model: the per-round invariants hold (checked inside the
// simulator) and every job ends finished, rejected with a reason, or
// reported unfinished.
TEST(Invariants, HoldOnRandomTracesWithFailures) {
  auto oracle = gavelOracle();
  auto cluster = parseInlineCluster("gpus:v100=12,p100=12,k80=12,per-node=4");
  ASSERT_TRUE(bool(cluster));
  auto network = createNetworkModel("crux", *cluster, 4);
  ASSERT_TRUE(bool(network));
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    GeneratorParams params;
    params.ratePerHour = 6;
    params.numJobs = 60;
    params.seed = seed;
    auto workload = generateGavelWorkload(params, *oracle);
    ASSERT_TRUE(bool(workload));
    // Short jobs keep the test fast.
    for (Job &job : workload->jobs)
      job.totalSteps = std::max(1.0, job.totalSteps / 20);
    RateModel rates(*cluster, *oracle, workload->jobs);
    std::mt19937_64 rng(seed);
    SimOptions options;
    options.checkInvariants = true;
    options.checkpointEveryS = 600;
    options.network = seed == 2 ? network->get() : nullptr;
    for (unsigned f = 0; f < 3; ++f)
      options.failures.push_back(
          {unsigned(rng() % cluster->nodes.size()), double(rng() % 20000)});
    for (const char *name :
         {"fifo", "maxmin-agnostic", "gavel-maxmin", "gavel-throughput",
          "hadar", "hadar-fork", "crius", "rubick"}) {
      auto policy = createPolicy(name, {});
      ASSERT_TRUE(bool(policy));
      auto result = simulate(*workload, *cluster, rates, **policy, options);
      ASSERT_TRUE(bool(result)) << name << ": " << message(result.takeError());
      unsigned accounted = 0;
      for (const JobRecord &r : result->jobs)
        accounted += r.status == JobStatus::Finished ||
                     r.status == JobStatus::Rejected ||
                     r.status == JobStatus::Unfinished;
      EXPECT_EQ(accounted, workload->jobs.size());
      // Failures leave 24 healthy GPUs of 36 at worst: every job fits and
      // nothing may be lost.
      for (const JobRecord &r : result->jobs)
        EXPECT_EQ(r.status, JobStatus::Finished)
            << name << " seed " << seed << " job " << r.id;
      PolicyStats stats = computeStats(*result, *workload);
      EXPECT_GT(stats.gpuUtilization, 0);
      EXPECT_LE(stats.gpuUtilization, 1 + 1e-9);
      EXPECT_LE(stats.gpuUtilization, stats.allocatedUtilization + 1e-9);
    }
  }
}

// The checks can fail: hand-made broken states are caught.
TEST(Invariants, DetectViolations) {
  auto cluster = parseInlineCluster("gpus:v100=4");
  ASSERT_TRUE(bool(cluster));
  std::vector<Job> jobs(2);
  jobs[0].totalSteps = jobs[1].totalSteps = 100;
  SimState state;
  state.jobs.resize(2);
  state.lastCkpt.assign(2, 0);
  state.nodeFailed.assign(1, false);
  state.nodeUsed.assign(1, 0);
  EXPECT_FALSE(bool(checkInvariants(state, *cluster, jobs)));
  // Double booking: 3 + 2 GPUs on a 4-GPU node.
  state.jobs[0].placement = {{0, 3}};
  state.jobs[1].placement = {{0, 2}};
  llvm::Error doubleBooked = checkInvariants(state, *cluster, jobs);
  ASSERT_TRUE(bool(doubleBooked));
  EXPECT_NE(message(std::move(doubleBooked)).find("5 of 4 GPUs"),
            std::string::npos);
  state.jobs[1].placement.clear();
  // Completed steps going backwards.
  state.lastCkpt[0] = 50;
  state.jobs[0].ckptSteps = 40;
  state.jobs[0].steps = 40;
  llvm::Error backwards = checkInvariants(state, *cluster, jobs);
  ASSERT_TRUE(bool(backwards));
  EXPECT_NE(message(std::move(backwards)).find("decreased"), std::string::npos);
  state.lastCkpt[0] = 0;
  // GPUs held on a failed node.
  state.nodeFailed[0] = true;
  llvm::Error onFailed = checkInvariants(state, *cluster, jobs);
  ASSERT_TRUE(bool(onFailed));
  EXPECT_NE(message(std::move(onFailed)).find("failed node"),
            std::string::npos);
  // A rejected job without a reason.
  SimResult result;
  result.policy = "p";
  result.jobs.resize(2);
  result.jobs[1].id = 1;
  result.jobs[1].status = JobStatus::Rejected;
  llvm::Error final = checkFinalInvariants(result, jobs);
  ASSERT_TRUE(bool(final));
  EXPECT_NE(message(std::move(final)).find("without a reason"),
            std::string::npos);
}
