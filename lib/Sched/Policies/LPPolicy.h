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

namespace weft {
namespace sched {

class LPPolicy : public Policy {
public:
  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override;
  double solverSeconds() const override { return seconds; }
  unsigned solves() const override { return numSolves; }

protected:
  /// Time fractions per group of identical jobs for the current jobs.
  virtual llvm::Expected<GroupFractions> solve(const PolicyInput &in) = 0;
  double seconds = 0;

private:
  unsigned numSolves = 0;
  /// The last solve's fractions; per job id, the solve that saw it (0:
  /// none) and its group there.
  GroupFractions last;
  unsigned stamp = 0;
  std::vector<unsigned> stampOf, groupOf;
};

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_POLICIES_LPPOLICY_H
