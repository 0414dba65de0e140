//===- Synthesize.cpp - spmd-synthesize -----------------------------------===//
//
// Replaces a graph program with the plan weft::synthesize finds for it.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Synthesize.h"
#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Support/Error.h"
#include "weft/Synth/PlanChoice.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft::spmd {
#define GEN_PASS_DEF_SYNTHESIZE
#include "Spmd/Transforms/Passes.h.inc"
} // namespace weft::spmd

using namespace weft;

namespace {
struct SynthesizePass : public spmd::impl::SynthesizeBase<SynthesizePass> {
  using SynthesizeBase::SynthesizeBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    SynthOptions options;
    auto spec = spmd::loadPassCluster(cluster, dtype, options.eval);
    if (!spec) {
      spmd::emitPassError(module, getArgument(), spec.takeError());
      return signalPassFailure();
    }
    if (heuristic != "admissible" && heuristic != "zero") {
      spmd::emitPassError(module, getArgument(),
                          badInput("unknown heuristic '{0}' (expected "
                                   "admissible or zero)",
                                   heuristic.getValue()));
      return signalPassFailure();
    }
    options.heuristic = heuristic == "zero"
                            ? SynthOptions::Heuristic::Zero
                            : SynthOptions::Heuristic::Admissible;
    options.memo = memo;
    options.fixedRatios = fixedRatios;
    options.maxExpansions = maxExpansions;
    options.align = align;
    if (report)
      options.progress = [op = module.getOperation()](llvm::StringRef line) {
        op->emitRemark() << line;
      };
    auto result = synthesize(module, *spec, options);
    if (!result) {
      spmd::emitPassError(module, getArgument(), result.takeError());
      return signalPassFailure();
    }
    auto chosen = choose(module, *spec, options.eval, std::move(result->plan));
    if (!chosen) {
      spmd::emitPassError(module, getArgument(), chosen.takeError());
      return signalPassFailure();
    }
    // The module becomes the plan: its ops and its attributes.
    mlir::ModuleOp plan = *chosen->plan;
    module.getBody()->getOperations().clear();
    module.getBody()->getOperations().splice(module.getBody()->end(),
                                             plan.getBody()->getOperations());
    module->setAttrs(plan->getAttrDictionary());
    if (report)
      module.emitRemark() << llvm::formatv(
          "synthesised: {0} expansions, gap {1:P}{2}, {3} alternation(s); "
          "search step time {4:e6} s, evaluated {5:e6} s (estimates); "
          "written: {6}",
          result->stats.expansions, result->stats.gap,
          result->stats.capped ? ", capped" : "", result->stats.alternations,
          result->searchStepSeconds, result->evaluatedStepSeconds,
          chosen->source);
  }

  /// The plan to write (weft/Synth/PlanChoice.h), with the baselines of the
  /// graph program `graph` as candidates when `baselines` is set.
  llvm::Expected<ChosenPlan> choose(mlir::ModuleOp graph,
                                    const ClusterSpec &spec,
                                    const EvalOptions &eval,
                                    mlir::OwningOpRef<mlir::ModuleOp> plan) {
    std::vector<BaselinePlan> built;
    std::vector<CandidatePlan> candidates;
    if (baselines)
      for (BaselineKind kind : allBaselines()) {
        auto b = buildBaseline(kind, graph, spec, eval.dtype);
        if (!b)
          return b.takeError();
        built.push_back(std::move(*b));
        candidates.push_back({baselineName(kind).str(), *built.back().plan});
      }
    auto chosen = choosePlan(std::move(plan), candidates, spec, eval);
    if (!chosen)
      return chosen.takeError();
    if (!chosen->estimate.fits) {
      EvalOptions final = eval;
      final.overlapGradientSync = true;
      return shortOfMemory(chosen->estimate, final);
    }
    return chosen;
  }
};
} // namespace
