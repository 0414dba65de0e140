//===- LPPolicy.cpp - Base of Gavel's LP policies ------------------------===//

#include "LPPolicy.h"

using namespace weft;
using namespace weft::sched;

llvm::Expected<std::vector<Assignment>> LPPolicy::plan(const PolicyInput &in) {
  bool missing = false;
  for (const ActiveJob &job : in.active)
    missing |= !cached.count(job.id);
  if (in.changed || missing) {
    auto fractions = solve(in);
    if (!fractions)
      return fractions.takeError();
    ++numSolves;
    cached.clear();
    for (unsigned i = 0; i < in.active.size(); ++i)
      cached[in.active[i].id] = (*fractions)[i];
  }
  std::vector<std::vector<double>> fractions;
  fractions.reserve(in.active.size());
  for (const ActiveJob &job : in.active)
    fractions.push_back(cached[job.id]);
  return roundTimeFractions(in, fractions);
}
