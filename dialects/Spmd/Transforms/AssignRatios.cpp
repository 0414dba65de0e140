//===- AssignRatios.cpp - spmd-assign-ratios ------------------------------===//
//
// The stand-alone ratio LP on an existing plan (weft::ratio::assignRatios).
//
//===----------------------------------------------------------------------===//

#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Ratio/PlanRatios.h"

namespace weft::spmd {
#define GEN_PASS_DEF_ASSIGNRATIOS
#include "Spmd/Transforms/Passes.h.inc"
} // namespace weft::spmd

using namespace weft;

namespace {
struct AssignRatiosPass
    : public spmd::impl::AssignRatiosBase<AssignRatiosPass> {
  using AssignRatiosBase::AssignRatiosBase;

  void runOnOperation() override {
    EvalOptions options;
    auto spec = spmd::loadPassCluster(cluster, dtype, options);
    if (!spec) {
      spmd::emitPassError(getOperation(), getArgument(), spec.takeError());
      return signalPassFailure();
    }
    auto result = ratio::assignRatios(getOperation(), *spec, options);
    if (!result) {
      spmd::emitPassError(getOperation(), getArgument(), result.takeError());
      return signalPassFailure();
    }
  }
};
} // namespace
