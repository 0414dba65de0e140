//===- GavelMaxMin.cpp - Gavel's heterogeneity-aware max-min fairness ----===//
//
// Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for Deep
// Learning Workloads", OSDI'20, §4.1: max-min of normalised effective
// throughput over time fractions; solved with GLPK (MaxMinLP.cpp).
//
//===----------------------------------------------------------------------===//

#include "LPPolicy.h"

using namespace weft;
using namespace weft::sched;

namespace {
class GavelMaxMin : public LPPolicy {
public:
  llvm::StringRef name() const override { return "gavel-maxmin"; }

protected:
  llvm::Expected<GroupFractions> solve(const PolicyInput &in) override {
    return solveMaxMinFractions(in, /*agnostic=*/false, seconds);
  }
};
} // namespace

std::unique_ptr<Policy> sched::createGavelMaxMin() {
  return std::make_unique<GavelMaxMin>();
}
