//===- SelectCollectives.cpp - spmd-select-collectives --------------------===//
//
// Per collective, the cheaper variant at the current ratios
// (weft::ratio::selectCollectives).
//
//===----------------------------------------------------------------------===//

#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Eval/PlanRatios.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft::spmd {
#define GEN_PASS_DEF_SELECTCOLLECTIVES
#include "Spmd/Transforms/Passes.h.inc"
} // namespace weft::spmd

using namespace weft;

namespace {
struct SelectCollectivesPass
    : public spmd::impl::SelectCollectivesBase<SelectCollectivesPass> {
  using SelectCollectivesBase::SelectCollectivesBase;

  void runOnOperation() override {
    EvalOptions options;
    auto spec = spmd::loadPassCluster(cluster, dtype, options);
    if (!spec) {
      spmd::emitPassError(getOperation(), getArgument(), spec.takeError());
      return signalPassFailure();
    }
    double before =
        report ? spmd::stepSeconds(getOperation(), *spec, options) : 0;
    auto result = ratio::selectCollectives(getOperation(), *spec, options);
    if (!result) {
      spmd::emitPassError(getOperation(), getArgument(), result.takeError());
      return signalPassFailure();
    }
    if (report)
      getOperation().emitRemark() << llvm::formatv(
          "collectives: {0} of {1} changed; evaluator step time {2:e6} s -> "
          "{3:e6} s (estimates)",
          result->changed, result->considered, before,
          spmd::stepSeconds(getOperation(), *spec, options));
  }
};
} // namespace
