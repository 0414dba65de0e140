//===- PlanRatios.h - Ratio LP, collective choice, integer sizes on a plan
//-*- C++ -*-===//
//
// The three plan-level operations of docs/Design.md §4–5 that the alternation
// and the spmd passes (spmd-assign-ratios, spmd-select-collectives,
// spmd-integerize) run: each reads the plan, prices it with
// ratioProblemFromPlan and writes the result back. docs/Ratios.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_PLANRATIOS_H
#define WEFT_EVAL_PLANRATIOS_H

#include "weft/Eval/RatioFromPlan.h"
#include "weft/Ratio/SolveRatios.h"

namespace weft {
namespace ratio {

struct AssignOptions {
  LpOptions lp;
  /// Sequential LP (only when the problem has linearised costs): at most
  /// this many LPs, trust region starting at `radius`, halved on every LP
  /// that does not improve the true objective.
  unsigned maxRounds = 8;
  double radius = 0.1;
  /// Sequential LP: stop once an LP's own optimum (the linearised cost)
  /// is not below the true objective at the current ratios by more than
  /// this fraction of it. Rounds that follow a failure shrink the region
  /// around the same linearisation, so they would predict no more.
  double minPredictedGain = 1e-3;
};

struct AssignResult {
  /// Objective at the plan's ratios before and after, seconds.
  double beforeSeconds = 0, afterSeconds = 0;
  /// LPs solved; the last LP's size.
  unsigned rounds = 0, rows = 0, columns = 0;
  /// The ratios were rewritten (false: the plan's ratios were already
  /// optimal and it is left untouched).
  bool changed = false;
};

/// Solves the ratio LP of `plan` and writes the ratios (segments it moves
/// lose their integer sizes). Idempotent: a plan whose ratios the LP does
/// not strictly improve is left unchanged.
llvm::Expected<AssignResult> assignRatios(mlir::ModuleOp plan,
                                          const ClusterSpec &spec,
                                          const EvalOptions &options,
                                          const AssignOptions &assign = {});

struct SelectResult {
  /// Collectives whose variant changed, and how many were considered.
  unsigned changed = 0, considered = 0;
};

/// Per collective, at the plan's current ratios: all_gather `mode`
/// (padded | grouped) and all_reduce `algorithm` (ring | hierarchical |
/// tree), the one whose forward + dual time (max over devices, evaluator) is
/// smaller; ties keep the current choice. Separable: each collective's time
/// depends only on its own variant.
llvm::Expected<SelectResult> selectCollectives(mlir::ModuleOp plan,
                                               const ClusterSpec &spec,
                                               const EvalOptions &options);

/// Integer sizes for the plan's current ratios (integerize, then
/// checkIntegerPlan), written into the plan. Returns the sizes with the
/// continuous and integer costs.
llvm::Expected<IntegerPlan>
integerizePlan(mlir::ModuleOp plan, const ClusterSpec &spec,
               const EvalOptions &options,
               const IntegerizeOptions &integerize = {});

} // namespace ratio
} // namespace weft

#endif // WEFT_EVAL_PLANRATIOS_H
