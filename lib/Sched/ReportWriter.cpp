//===- ReportWriter.cpp - report.json and jobs.csv -----------------------===//

#include "weft/Sched/Report.h"
#include "weft/Support/Error.h"
#include "weft/Support/FileOutput.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace weft;
using namespace weft::sched;

static const char *statusName(JobStatus status) {
  switch (status) {
  case JobStatus::Finished:
    return "finished";
  case JobStatus::Rejected:
    return "rejected";
  case JobStatus::Unfinished:
    return "unfinished";
  }
  return "unknown";
}

llvm::Error sched::writeReport(llvm::StringRef dir,
                               llvm::ArrayRef<SimResult> results,
                               llvm::ArrayRef<PolicyStats> stats,
                               const Workload &workload) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return badInput("cannot create report directory '{0}': {1}", dir,
                    ec.message());
  llvm::json::Object policies, details;
  for (const PolicyStats &s : stats) {
    policies[s.policy] = llvm::json::Object{
        {"avg_jct_h", s.avgJctH},
        {"p50_jct_h", s.p50JctH},
        {"p99_jct_h", s.p99JctH},
        {"makespan_h", s.makespanH},
        {"avg_queue_h", s.avgQueueH},
        {"gpu_utilization", s.gpuUtilization},
        {"deadlines", llvm::json::Object{{"met", s.deadlinesMet},
                                         {"missed", s.deadlinesMissed},
                                         {"rejected", s.deadlinesRejected}}}};
    details[s.policy] = llvm::json::Object{
        {"measured_jobs", s.measured},
        {"finished_jobs", s.finished},
        {"unfinished_jobs", s.unfinished},
        {"rejected_jobs", s.rejected},
        {"allocated_gpu_utilization", s.allocatedUtilization},
        {"restarts", s.restarts},
        {"stalled_restarts", s.stalledRestarts},
        {"avg_samples_per_s", s.avgSamplesPerS},
        {"lp_time_s", s.solverS},
        {"lp_solves", s.solves},
        {"wall_time_s", s.wallS}};
  }
  llvm::json::Value root = llvm::json::Object{{"policies", std::move(policies)},
                                              {"details", std::move(details)}};
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "report.json");
  if (auto err = writeFile(path, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", root) << "\n";
      }))
    return err;
  path = dir;
  llvm::sys::path::append(path, "jobs.csv");
  if (auto err = writeFile(path, [&](llvm::raw_ostream &os) {
        os << "policy,job,job_type,gpus,arrival_s,start_s,finish_s,jct_h,"
              "queue_h,status,restarts,lost_steps,deadline_s,reason,"
              "stalled_restarts\n";
        for (const SimResult &result : results)
          for (const JobRecord &r : result.jobs) {
            const Job &job = workload.jobs[r.id];
            bool finished = r.status == JobStatus::Finished;
            os << result.policy << "," << r.id << "," << job.type << ","
               << job.scale << "," << llvm::format("%.1f", job.arrivalS) << ",";
            if (r.startS >= 0)
              os << llvm::format("%.1f", r.startS);
            os << ",";
            if (finished)
              os << llvm::format("%.1f,%.4f", r.finishS,
                                 (r.finishS - job.arrivalS) / 3600);
            else
              os << ",";
            os << ",";
            if (r.startS >= 0)
              os << llvm::format("%.4f", (r.startS - job.arrivalS) / 3600);
            os << "," << statusName(r.status) << "," << r.restarts << ","
               << llvm::format("%.1f", r.lostSteps) << ",";
            if (job.deadlineS)
              os << llvm::format("%.1f", *job.deadlineS);
            std::string reason = r.rejectReason;
            std::replace(reason.begin(), reason.end(), ',', ';');
            os << "," << reason << "," << r.stalledRestarts << "\n";
          }
      }))
    return err;
  path = dir;
  llvm::sys::path::append(path, "jct_cdf.svg");
  if (auto err = writeFile(path, [&](llvm::raw_ostream &os) {
        os << jctCdfSvg(results, workload);
      }))
    return err;
  path = dir;
  llvm::sys::path::append(path, "utilization.svg");
  return writeFile(
      path, [&](llvm::raw_ostream &os) { os << utilizationSvg(results); });
}
