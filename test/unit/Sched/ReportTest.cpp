//===- ReportTest.cpp - Statistics and report files ----------------------===//

#include "weft/Sched/Report.h"
#include "TestOracle.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace weft::sched;
using namespace weft::sched::test;

namespace {
/// Three jobs with JCTs 1 h, 2 h and 4 h; job 3 outside the window.
std::pair<Workload, SimResult> threeJobs() {
  Workload workload;
  SimResult result;
  result.policy = "p";
  for (unsigned i = 0; i < 4; ++i) {
    Job job;
    job.id = i;
    job.type = "A";
    job.arrivalS = 100 * i;
    workload.jobs.push_back(job);
    JobRecord record;
    record.id = i;
    record.status = JobStatus::Finished;
    record.startS = job.arrivalS + 360 * i;
    record.finishS = job.arrivalS + 3600.0 * (i == 3 ? 10 : (1 << i));
    result.jobs.push_back(record);
  }
  workload.measureEnd = 3;
  result.availableGpuS = 1000;
  result.usefulGpuS = 250;
  result.allocatedGpuS = 500;
  result.utilization = {{0, 0.5}, {360, 0.25}};
  return {workload, result};
}
} // namespace

TEST(Stats, MeasuresTheWindow) {
  auto [workload, result] = threeJobs();
  PolicyStats stats = computeStats(result, workload);
  EXPECT_EQ(stats.measured, 3u);
  EXPECT_NEAR(stats.avgJctH, 7.0 / 3, 1e-12);
  EXPECT_NEAR(stats.p50JctH, 2, 1e-12);
  EXPECT_NEAR(stats.p99JctH, 4, 1e-12);
  // Makespan covers all jobs: job 3 finishes at 300 + 36000 s.
  EXPECT_NEAR(stats.makespanH, (300 + 36000.0) / 3600, 1e-12);
  // Queueing 0, 360, 720 s.
  EXPECT_NEAR(stats.avgQueueH, 360.0 / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(stats.gpuUtilization, 0.25);
  EXPECT_DOUBLE_EQ(stats.allocatedUtilization, 0.5);
}

TEST(Report, WritesTheDocumentedFiles) {
  auto [workload, result] = threeJobs();
  PolicyStats stats = computeStats(result, workload);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("weft-sched", dir));
  ASSERT_FALSE(bool(writeReport(dir, {result}, {stats}, workload)));
  auto json = llvm::MemoryBuffer::getFile(dir + "/report.json");
  ASSERT_TRUE(bool(json));
  auto root = llvm::json::parse((*json)->getBuffer());
  ASSERT_TRUE(bool(root));
  const llvm::json::Object *p =
      root->getAsObject()->getObject("policies")->getObject("p");
  ASSERT_NE(p, nullptr);
  for (const char *key : {"avg_jct_h", "p50_jct_h", "p99_jct_h", "makespan_h",
                          "avg_queue_h", "gpu_utilization"})
    EXPECT_TRUE(p->getNumber(key).has_value()) << key;
  EXPECT_NEAR(*p->getNumber("avg_jct_h"), 7.0 / 3, 1e-9);
  const llvm::json::Object *deadlines = p->getObject("deadlines");
  ASSERT_NE(deadlines, nullptr);
  for (const char *key : {"met", "missed", "rejected"})
    EXPECT_TRUE(deadlines->getInteger(key).has_value()) << key;
  auto csv = llvm::MemoryBuffer::getFile(dir + "/jobs.csv");
  ASSERT_TRUE(bool(csv));
  EXPECT_EQ((*csv)->getBuffer().count('\n'), 5u); // header + 4 jobs
  for (const char *svg : {"/jct_cdf.svg", "/utilization.svg"}) {
    auto file = llvm::MemoryBuffer::getFile(dir + svg);
    ASSERT_TRUE(bool(file)) << svg;
    EXPECT_TRUE((*file)->getBuffer().startswith("<svg")) << svg;
    EXPECT_NE((*file)->getBuffer().find("polyline"), llvm::StringRef::npos);
  }
  llvm::sys::fs::remove_directories(dir);
}
