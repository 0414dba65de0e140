//===- LPPolicy.cpp - Base of Gavel's LP policies ------------------------===//

#include "LPPolicy.h"

using namespace weft;
using namespace weft::sched;

llvm::Expected<std::vector<Assignment>> LPPolicy::plan(const PolicyInput &in) {
  if (stampOf.size() < in.jobs.size()) {
    stampOf.resize(in.jobs.size(), 0);
    groupOf.resize(in.jobs.size(), 0);
  }
  bool missing = false;
  for (const ActiveJob &job : in.active)
    missing |= stampOf[job.id] != stamp || stamp == 0;
  if (in.changed || missing) {
    auto fractions = solve(in);
    if (!fractions)
      return fractions.takeError();
    ++numSolves;
    ++stamp;
    last = std::move(*fractions);
    for (unsigned i = 0; i < in.active.size(); ++i) {
      stampOf[in.active[i].id] = stamp;
      groupOf[in.active[i].id] = last.groups.groupOf[i];
    }
  }
  return roundTimeFractions(in, [&](unsigned i) -> llvm::ArrayRef<double> {
    return last.x[groupOf[in.active[i].id]];
  });
}
