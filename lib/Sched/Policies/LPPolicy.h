//===- LPPolicy.h - Base of Gavel's LP policies ------------------*- C++
//-*-===//
//
// Solves for time fractions when the job set or the cluster changed, keeps
// them otherwise, and rounds them to one round with Gavel's priorities.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SCHED_POLICIES_LPPOLICY_H
#define WEFT_LIB_SCHED_POLICIES_LPPOLICY_H

#include "PolicyUtil.h"
#include <unordered_map>

namespace weft {
namespace sched {

class LPPolicy : public Policy {
public:
  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override;
  double solverSeconds() const override { return seconds; }
  unsigned solves() const override { return numSolves; }

protected:
  /// Time fractions [active index][type] for the current jobs.
  virtual llvm::Expected<std::vector<std::vector<double>>>
  solve(const PolicyInput &in) = 0;
  double seconds = 0;

private:
  unsigned numSolves = 0;
  std::unordered_map<unsigned, std::vector<double>> cached;
};

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_POLICIES_LPPOLICY_H
