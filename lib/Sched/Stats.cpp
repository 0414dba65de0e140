//===- Stats.cpp - Per-policy statistics and the text table --------------===//

#include "weft/Sched/Report.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::sched;

static double percentile(std::vector<double> values, double p) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank.
  size_t rank = size_t(std::ceil(p / 100.0 * values.size()));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

PolicyStats sched::computeStats(const SimResult &result,
                                const Workload &workload) {
  PolicyStats stats;
  stats.policy = result.policy;
  std::vector<double> jcts;
  double queueSum = 0;
  unsigned started = 0;
  double firstArrival = workload.jobs.empty() ? 0 : workload.jobs[0].arrivalS;
  double lastFinish = firstArrival;
  for (const JobRecord &record : result.jobs) {
    const Job &job = workload.jobs[record.id];
    if (record.status == JobStatus::Finished)
      lastFinish = std::max(lastFinish, record.finishS);
    if (record.status == JobStatus::Finished && job.deadlineS) {
      if (record.finishS <= *job.deadlineS + 1e-6)
        ++stats.deadlinesMet;
      else
        ++stats.deadlinesMissed;
    } else if (record.status == JobStatus::Unfinished && job.deadlineS) {
      ++stats.deadlinesMissed;
    } else if (record.status == JobStatus::Rejected && job.deadlineS) {
      ++stats.deadlinesRejected;
    }
    stats.restarts += record.restarts;
    stats.stalledRestarts += record.stalledRestarts;
    stats.stalledJobs += record.stalledRestarts > 0;
    if (!workload.measured(record.id))
      continue;
    ++stats.measured;
    if (record.status == JobStatus::Rejected) {
      ++stats.rejected;
      continue;
    }
    if (record.startS >= 0) {
      queueSum += record.startS - job.arrivalS;
      ++started;
    }
    if (record.status != JobStatus::Finished) {
      ++stats.unfinished;
      continue;
    }
    ++stats.finished;
    jcts.push_back((record.finishS - job.arrivalS) / 3600);
  }
  double sum = 0;
  for (double jct : jcts)
    sum += jct;
  stats.avgJctH = jcts.empty() ? 0 : sum / jcts.size();
  stats.p50JctH = percentile(jcts, 50);
  stats.p99JctH = percentile(jcts, 99);
  stats.makespanH = (lastFinish - firstArrival) / 3600;
  double samples = 0;
  for (const auto &[start, end, done] : result.samples)
    samples += done;
  if (lastFinish > firstArrival)
    stats.avgSamplesPerS = samples / (lastFinish - firstArrival);
  stats.avgQueueH = started ? queueSum / started / 3600 : 0;
  if (result.availableGpuS > 0) {
    stats.gpuUtilization = result.usefulGpuS / result.availableGpuS;
    stats.allocatedUtilization = result.allocatedGpuS / result.availableGpuS;
  }
  stats.solverS = result.solverS;
  stats.solves = result.solves;
  stats.wallS = result.wallS;
  return stats;
}

void sched::printStatsTable(llvm::ArrayRef<PolicyStats> stats,
                            llvm::raw_ostream &os) {
  os << "policy               avg JCT    p50 JCT    p99 JCT     makespan   "
        "avg queue  GPU util   finished   unfin. rejected  deadlines   LP "
        "time\n";
  for (const PolicyStats &s : stats) {
    std::string deadlines = std::to_string(s.deadlinesMet) + "/" +
                            std::to_string(s.deadlinesMissed) + "/" +
                            std::to_string(s.deadlinesRejected);
    os << llvm::format("%-18s %8.2f h %8.2f h %8.2f h %10.2f h %9.2f h "
                       "%7.1f %% %10u %8u %8u %10s %7.2f s\n",
                       s.policy.c_str(), s.avgJctH, s.p50JctH, s.p99JctH,
                       s.makespanH, s.avgQueueH, 100 * s.gpuUtilization,
                       s.finished, s.unfinished, s.rejected, deadlines.c_str(),
                       s.solverS);
  }
  os << "(finished/unfinished/rejected count measured jobs; deadlines = "
        "met/missed/rejected jobs)\n";
}
