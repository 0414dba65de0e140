//===- MaxMinAgnostic.cpp - Heterogeneity-agnostic max-min fairness ------===//
//
// Gavel's baseline (OSDI'20, §7.2, "LAS" / max-min without heterogeneity):
// the same LP with every GPU type counted as equally fast, so a job's share
// is time, not throughput; the type it lands on is whatever the LP picks.
//
//===----------------------------------------------------------------------===//

#include "LPPolicy.h"

using namespace weft;
using namespace weft::sched;

namespace {
class MaxMinAgnostic : public LPPolicy {
public:
  llvm::StringRef name() const override { return "maxmin-agnostic"; }

protected:
  llvm::Expected<GroupFractions> solve(const PolicyInput &in) override {
    return solveMaxMinFractions(in, /*agnostic=*/true, seconds);
  }
};
} // namespace

std::unique_ptr<Policy> sched::createMaxMinAgnostic() {
  return std::make_unique<MaxMinAgnostic>();
}
