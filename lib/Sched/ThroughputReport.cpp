//===- ThroughputReport.cpp - Throughput and completions per time window -===//
//
// One CSV row per policy and window of `windowS` seconds (windows aligned
// at time 0, from the one holding the first arrival to the one holding the
// run's last round or completion): samples processed per second and jobs
// finished. A round's samples are spread evenly over the round, so windows
// shorter than a round share its samples by overlap.
//
//===----------------------------------------------------------------------===//

#include "weft/Sched/Report.h"
#include "weft/Support/FileOutput.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::sched;

void sched::printThroughputCsv(llvm::ArrayRef<SimResult> results,
                               const Workload &workload, double windowS,
                               llvm::raw_ostream &os) {
  os << "policy,window_start_h,window_end_h,samples_per_s,jobs_finished\n";
  if (workload.jobs.empty() || windowS <= 0)
    return;
  double first = workload.jobs.front().arrivalS;
  for (const SimResult &result : results) {
    double last = first;
    for (const auto &[start, end, samples] : result.samples)
      last = std::max(last, end);
    for (const JobRecord &r : result.jobs)
      if (r.status == JobStatus::Finished)
        last = std::max(last, r.finishS);
    size_t begin = size_t(std::floor(first / windowS));
    size_t count = size_t(std::floor(last / windowS)) - begin + 1;
    std::vector<double> samples(count, 0);
    std::vector<unsigned> finished(count, 0);
    auto windowOf = [&](double t) {
      size_t w = size_t(std::floor(t / windowS));
      return std::min(count - 1, w < begin ? 0 : w - begin);
    };
    for (const auto &[start, end, done] : result.samples) {
      if (end <= start)
        continue;
      for (size_t w = windowOf(start); w < count; ++w) {
        double lo = std::max(start, (begin + w) * windowS);
        double hi = std::min(end, (begin + w + 1) * windowS);
        if (hi <= lo)
          break;
        samples[w] += done * (hi - lo) / (end - start);
      }
    }
    for (const JobRecord &r : result.jobs)
      if (r.status == JobStatus::Finished)
        ++finished[windowOf(r.finishS)];
    for (size_t w = 0; w < count; ++w)
      os << result.policy << ","
         << llvm::format("%.4f,%.4f,%.3f,%u\n", (begin + w) * windowS / 3600,
                         (begin + w + 1) * windowS / 3600, samples[w] / windowS,
                         finished[w]);
  }
}

llvm::Error sched::writeThroughputCsv(llvm::StringRef path,
                                      llvm::ArrayRef<SimResult> results,
                                      const Workload &workload,
                                      double windowS) {
  return writeFile(path, [&](llvm::raw_ostream &os) {
    printThroughputCsv(results, workload, windowS, os);
  });
}
