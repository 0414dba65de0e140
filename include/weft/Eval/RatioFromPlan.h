//===- RatioFromPlan.h - The ratio problem of an spmd plan, and back -*- C++
//-*-===//
//
// Builds the IR-free RatioProblem (docs/Design.md §5) of an `spmd` plan at its
// current collective variants, pricing every step exactly as the evaluator
// composes it (weft/Eval/Evaluator.h, docs/Evaluator.md), and writes chosen
// ratios and integer sizes back into the plan. docs/Ratios.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_RATIOFROMPLAN_H
#define WEFT_EVAL_RATIOFROMPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Ratio/Integerize.h"
#include "weft/Ratio/RatioProblem.h"
#include "llvm/Support/Error.h"

namespace weft {
namespace ratio {

/// The ratio problem of `plan` on `spec`:
/// - one class per mesh device class; one segment per group of tied plan
///   segments that is split on the node axis (groups split only on the even
///   local axes keep the plan's ratios and sizes and are constants here);
/// - one step per `spmd.local` with the collectives before it, a trailing
///   "collectives" step, and an "optimizer" step: forward + backward compute
///   per class linear in the shard sizes (roofline max pieces as MaxCost),
///   collectives and their duals (padded all-gather as max pieces, per-NIC
///   loads, grouped rings and all_to_all per link resource), gradient sync
///   and optimizer per parameter strategy, constants kept;
/// - memory rows per class; identical steps collapsed.
/// Costs that are not linear in the ratios (a product of two node-axis
/// splits, the best-of-two gradient all-reduce, the largest transient buffer)
/// are taken at the plan's current ratios; `problem.linearized` says so.
/// Profile-DB times are not used (roofline). Errors: bad input (no mesh,
/// a mesh that does not fit `spec`, unknown ops).
llvm::Expected<RatioProblem> ratioProblemFromPlan(mlir::ModuleOp plan,
                                                  const ClusterSpec &spec,
                                                  const EvalOptions &options);

/// The plan's current ratios of the problem's segments ([segment][class]).
llvm::Expected<Ratios> planRatios(mlir::ModuleOp plan);

/// Writes `ratios` (one row per problem segment, as ratioProblemFromPlan
/// numbers them) into every member segment of `plan`, rescaled so they sum
/// to 1 over the mesh, and, when `sizes` is given, the integer sizes (device
/// i of class c is the i-th mesh device of c, node-major; members get the
/// base sizes times their extent factor). Without `sizes` the moved
/// segments lose their sizes. Segments the problem does not move are left
/// alone. Errors: bad input (shapes that do not match the plan, negative or
/// non-finite ratios, sizes for a group whose extents are not multiples).
llvm::Error applyRatios(mlir::ModuleOp plan, const Ratios &ratios,
                        const IntegerPlan *sizes = nullptr);

} // namespace ratio
} // namespace weft

#endif // WEFT_EVAL_RATIOFROMPLAN_H
