//===- Integerize.cpp - spmd-integerize -----------------------------------===//
//
// Integer shard sizes with Z3 for the plan's ratios, checked before they are
// written (weft::ratio::integerizePlan).
//
//===----------------------------------------------------------------------===//

#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Eval/PlanRatios.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft::spmd {
#define GEN_PASS_DEF_INTEGERIZE
#include "Spmd/Transforms/Passes.h.inc"
} // namespace weft::spmd

using namespace weft;

namespace {
struct IntegerizePass : public spmd::impl::IntegerizeBase<IntegerizePass> {
  using IntegerizeBase::IntegerizeBase;

  void runOnOperation() override {
    EvalOptions options;
    auto spec = spmd::loadPassCluster(cluster, dtype, options);
    if (!spec) {
      spmd::emitPassError(getOperation(), getArgument(), spec.takeError());
      return signalPassFailure();
    }
    ratio::IntegerizeOptions integerize;
    integerize.align = align;
    if (align < 1) {
      getOperation().emitError() << getArgument() << ": align must be >= 1";
      return signalPassFailure();
    }
    auto sizes =
        ratio::integerizePlan(getOperation(), *spec, options, integerize);
    if (!sizes) {
      spmd::emitPassError(getOperation(), getArgument(), sizes.takeError());
      return signalPassFailure();
    }
    if (report)
      getOperation().emitRemark() << llvm::formatv(
          "integer sizes: continuous cost {0:e6} s, integer cost {1:e6} s{2}; "
          "evaluator step time {3:e6} s (estimates)",
          sizes->continuousCost, sizes->integerCost,
          sizes->provedOptimal ? ", proved optimal" : "",
          spmd::stepSeconds(getOperation(), *spec, options));
  }
};
} // namespace
