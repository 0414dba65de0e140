//===- WorkloadTest.cpp - Gavel traces, CSV traces, the generator --------===//

#include "weft/Sched/Workload.h"
#include "TestOracle.h"
#include <cmath>

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
const char *kTen = "A\tpython3 a.py\tdir\t--steps\t1\t1000\t1\t1\t-1\t5\n"
                   "B\tpython3 b.py\tdir\t--steps\t1\t200\t1\t2\t-1\t0\n";
const char *kSeven = "A\tcmd\t-step\t1\t3000\t7.5\t1\n";
} // namespace

TEST(GavelTrace, ParsesTenFieldsAndSortsByArrival) {
  auto oracle = tinyOracle();
  auto workload = parseGavelTrace(kTen, "t.trace", *oracle);
  ASSERT_TRUE(bool(workload)) << message(workload.takeError());
  ASSERT_EQ(workload->jobs.size(), 2u);
  // B arrives first, so it is job 0.
  EXPECT_EQ(workload->jobs[0].type, "B");
  EXPECT_EQ(workload->jobs[0].id, 0u);
  EXPECT_DOUBLE_EQ(workload->jobs[0].weight, 2.0);
  EXPECT_EQ(workload->jobs[1].type, "A");
  EXPECT_DOUBLE_EQ(workload->jobs[1].totalSteps, 1000);
  EXPECT_DOUBLE_EQ(workload->jobs[1].arrivalS, 5);
  EXPECT_FALSE(workload->jobs[1].deadlineS.has_value());
}

TEST(GavelTrace, ParsesSevenFields) {
  auto oracle = tinyOracle();
  auto workload = parseGavelTrace(kSeven, "msr.trace", *oracle);
  ASSERT_TRUE(bool(workload)) << message(workload.takeError());
  EXPECT_DOUBLE_EQ(workload->jobs[0].totalSteps, 3000);
  EXPECT_DOUBLE_EQ(workload->jobs[0].arrivalS, 7.5);
  EXPECT_EQ(workload->jobs[0].scale, 1u);
}

TEST(GavelTrace, MalformedLineGivesFileAndLine) {
  auto oracle = tinyOracle();
  std::string text = std::string(kSeven) + "\nA\tcmd\t-step\t1\n";
  auto workload = parseGavelTrace(text, "bad.trace", *oracle);
  ASSERT_FALSE(bool(workload));
  std::string msg = message(workload.takeError());
  EXPECT_NE(msg.find("bad.trace:3:"), std::string::npos) << msg;
  auto steps =
      parseGavelTrace("A\tcmd\t-step\t1\tmany\t0\t1\n", "s.trace", *oracle);
  ASSERT_FALSE(bool(steps));
  msg = message(steps.takeError());
  EXPECT_NE(msg.find("s.trace:1: field 'total_steps'"), std::string::npos)
      << msg;
}

TEST(GavelTrace, UnknownJobTypeListsKnownOnes) {
  auto oracle = tinyOracle();
  auto workload =
      parseGavelTrace("Zebra\tcmd\t-step\t1\t10\t0\t1\n", "z.trace", *oracle);
  ASSERT_FALSE(bool(workload));
  std::string msg = message(workload.takeError());
  EXPECT_NE(msg.find("unknown job type 'Zebra'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("A; B; Big; C; E"), std::string::npos) << msg;
  auto scale =
      parseGavelTrace("A\tcmd\t-step\t1\t10\t0\t4\n", "s.trace", *oracle);
  ASSERT_FALSE(bool(scale));
  EXPECT_NE(message(scale.takeError()).find("known GPU counts: 1"),
            std::string::npos);
}

TEST(GavelTrace, ReadsSharedTraces) {
  auto oracle =
      TableOracle::load(WEFT_DATA_DIR "/gavel/simulation_throughputs.json");
  ASSERT_TRUE(bool(oracle));
  const char *msrPath = WEFT_DATA_DIR "/gavel/traces/msr_seed0_0e4a51.trace";
  // The msr trace asks for 4 GPUs for Recommendation, measured on 1 only.
  auto strict = loadTrace(msrPath, **oracle);
  ASSERT_FALSE(bool(strict));
  EXPECT_NE(message(strict.takeError()).find("msr_seed0_0e4a51.trace:42:"),
            std::string::npos);
  (*oracle)->setAssumeLinearScaling(true);
  auto msr = loadTrace(msrPath, **oracle);
  ASSERT_TRUE(bool(msr)) << message(msr.takeError());
  EXPECT_EQ(msr->jobs.size(), 1181u);
  auto physical = loadTrace(
      WEFT_DATA_DIR "/gavel/traces/physical_cluster_artifact_evaluation.trace",
      **oracle);
  ASSERT_TRUE(bool(physical)) << message(physical.takeError());
  EXPECT_EQ(physical->jobs.size(), 15u);
  for (unsigned i = 1; i < msr->jobs.size(); ++i)
    EXPECT_LE(msr->jobs[i - 1].arrivalS, msr->jobs[i].arrivalS);
}

TEST(CsvTrace, ParsesColumnsDurationsAndDeadlines) {
  auto oracle = tinyOracle();
  const char *text = "# a comment\n"
                     "job_type,gpus,arrival_s,duration_s,steps,deadline_s,"
                     "gpu_types,guaranteed_rate\n"
                     "A,1,10,360,,7200,v100|k80,\n"
                     "E,2,0,,500,,,3.5\n";
  auto workload = parseCsvTrace(text, "j.csv", *oracle);
  ASSERT_TRUE(bool(workload)) << message(workload.takeError());
  ASSERT_EQ(workload->jobs.size(), 2u);
  const Job &e = workload->jobs[0], &a = workload->jobs[1];
  EXPECT_EQ(e.type, "E");
  EXPECT_EQ(e.scale, 2u);
  EXPECT_DOUBLE_EQ(e.totalSteps, 500);
  EXPECT_DOUBLE_EQ(e.guaranteedRate, 3.5);
  // 360 s on the reference type (v100) at 10 steps/s.
  EXPECT_DOUBLE_EQ(a.totalSteps,
                   360 * *oracle->throughput("A", 1, "v100", true));
  ASSERT_TRUE(a.deadlineS.has_value());
  EXPECT_DOUBLE_EQ(*a.deadlineS, 10 + 7200);
  EXPECT_EQ(a.allowedTypes, (std::vector<std::string>{"v100", "k80"}));
}

TEST(CsvTrace, BadInputs) {
  auto oracle = tinyOracle();
  struct Case {
    const char *text, *expect;
  } cases[] = {
      {"job_type,gpus,arrival_s,colour\n", "unknown column 'colour'"},
      {"job_type,gpus,steps\n", "lacks the column 'arrival_s'"},
      {"job_type,gpus,arrival_s,steps\nA,1,0\n", "c.csv:2: found 3 fields"},
      {"job_type,gpus,arrival_s,steps\nA,1,-3,10\n", "field 'arrival_s'"},
      {"job_type,gpus,arrival_s,steps\nA,1.5,0,10\n", "expected an integer"},
      {"job_type,gpus,arrival_s,steps,duration_s\nA,1,0,10,20\n",
       "exactly one of"},
      {"job_type,gpus,arrival_s,steps\nQ,1,0,10\n", "unknown job type 'Q'"},
      {"# nothing\n", "no jobs"},
  };
  for (const Case &c : cases) {
    auto workload = parseCsvTrace(c.text, "c.csv", *oracle);
    ASSERT_FALSE(bool(workload)) << c.text;
    std::string msg = message(workload.takeError());
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
}

TEST(Generator, ParsesSpec) {
  auto params =
      parseGeneratorSpec("gavel:rate=2.5,jobs=100,seed=7,window=10-20");
  ASSERT_TRUE(bool(params));
  EXPECT_DOUBLE_EQ(params->ratePerHour, 2.5);
  EXPECT_EQ(params->numJobs, 100u);
  EXPECT_EQ(params->seed, 7u);
  EXPECT_EQ(params->windowBegin, 10u);
  EXPECT_EQ(params->windowEnd, 20u);
  for (const char *bad :
       {"poisson:rate=1", "gavel:rate=0", "gavel:jobs=x", "gavel:window=5-2",
        "gavel:colour=red", "gavel:jobs=10,window=5-20"})
    EXPECT_FALSE(bool(parseGeneratorSpec(bad))) << bad, (void)0;
}

TEST(Generator, FollowsGavelsDistributions) {
  auto oracle =
      TableOracle::load(WEFT_DATA_DIR "/gavel/simulation_throughputs.json");
  ASSERT_TRUE(bool(oracle));
  GeneratorParams params;
  params.ratePerHour = 4;
  params.numJobs = 4000;
  params.seed = 3;
  auto workload = generateGavelWorkload(params, **oracle);
  ASSERT_TRUE(bool(workload)) << message(workload.takeError());
  const auto &jobs = workload->jobs;
  ASSERT_EQ(jobs.size(), 4000u);
  // Mean inter-arrival 900 s (3600 / 4), within 5% for 4000 samples.
  double span = jobs.back().arrivalS - jobs.front().arrivalS;
  EXPECT_NEAR(span / (jobs.size() - 1), 900, 45);
  unsigned single = 0, longJobs = 0;
  for (const Job &job : jobs) {
    single += job.scale == 1;
    double rate = *(*oracle)->throughput(job.type, job.scale, "v100", true);
    double durationS = job.totalSteps / rate;
    EXPECT_GE(durationS, 60 * std::pow(10, 1.5) * 0.99);
    EXPECT_LE(durationS, 60 * std::pow(10, 4) * 1.01);
    longJobs += durationS > 60 * 1000;
  }
  // At least 70% single-GPU (more: non-scaling types fall back to 1).
  EXPECT_GT(single, 0.7 * jobs.size());
  // 20% long jobs, within 3 points.
  EXPECT_NEAR(double(longJobs) / jobs.size(), 0.2, 0.03);
  // Same seed, same workload; another seed differs.
  auto again = generateGavelWorkload(params, **oracle);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->jobs[100].totalSteps, jobs[100].totalSteps);
  params.seed = 4;
  auto other = generateGavelWorkload(params, **oracle);
  ASSERT_TRUE(bool(other));
  EXPECT_NE(other->jobs[100].arrivalS, jobs[100].arrivalS);
}
