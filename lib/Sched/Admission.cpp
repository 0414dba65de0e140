//===- Admission.cpp - Deadline-aware admission --------------------------===//

#include "weft/Sched/Admission.h"
#include <limits>

using namespace weft;
using namespace weft::sched;

double sched::estimateFinish(const RateModel &rates, unsigned job,
                             double remainingSteps, double nowS,
                             llvm::ArrayRef<double> backlogGpuS,
                             llvm::ArrayRef<unsigned> capacity,
                             unsigned onlyCount) {
  double best = std::numeric_limits<double>::infinity();
  const SchedCluster &cluster = rates.getCluster();
  for (unsigned t = 0; t < cluster.types.size(); ++t) {
    if (capacity[t] == 0)
      continue;
    double wait = backlogGpuS[t] / capacity[t];
    for (unsigned count : rates.counts(job)) {
      if (count > capacity[t] || (onlyCount && count != onlyCount))
        continue;
      double rate = std::max(rates.rate(job, t, count, true),
                             rates.rate(job, t, count, false));
      if (rate <= 0)
        continue;
      best = std::min(best, nowS + wait + remainingSteps / rate);
    }
  }
  return best;
}
