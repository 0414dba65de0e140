//===- AssignRatios.cpp - spmd-assign-ratios ------------------------------===//
//
// The stand-alone ratio LP on an existing plan (weft::ratio::assignRatios).
//
//===----------------------------------------------------------------------===//

#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Eval/PlanRatios.h"
#include "llvm/Support/FormatVariadic.h"

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
    double before =
        report ? spmd::stepSeconds(getOperation(), *spec, options) : 0;
    auto result = ratio::assignRatios(getOperation(), *spec, options);
    if (!result) {
      spmd::emitPassError(getOperation(), getArgument(), result.takeError());
      return signalPassFailure();
    }
    if (report)
      getOperation().emitRemark() << llvm::formatv(
          "ratios {0}: LP objective {1:e6} s -> {2:e6} s ({3} LP(s), {4} rows "
          "x {5} columns); evaluator step time {6:e6} s -> {7:e6} s "
          "(estimates)",
          result->changed ? "changed" : "unchanged", result->beforeSeconds,
          result->afterSeconds, result->rounds, result->rows, result->columns,
          before, spmd::stepSeconds(getOperation(), *spec, options));
  }
};
} // namespace
