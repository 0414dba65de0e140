//===- PlanBuilder.h - Turns a graph program into an spmd program --*- C++
//-*-===//
//
// The baselines' own layout propagation: given the layout of the inputs and
// of every parameter, it walks the graph program in order, picks for each op
// the result layout its dims allow (a split dim stays split, a contracted
// split dim makes a partial sum, a normalised or reduced-by-max dim must be
// whole), brings the operands there with collectives (shard, all_gather,
// all_to_all, all_reduce of partial sums) and wraps the op in an
// `spmd.local`. It is deliberately simple (one op per local, first operand
// wins); the synthesizer will use the sharding rules of the graph dialect
// instead.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_BASELINES_PLANBUILDER_H
#define WEFT_LIB_BASELINES_PLANBUILDER_H

#include "SegmentTable.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace weft::baselines {

/// What a builder decides; everything else is propagated.
struct LayoutChoice {
  /// Layout of each function argument (null: replicated).
  std::vector<spmd::DistAttr> arguments;
  /// Layout of parameters by name (absent: replicated).
  llvm::StringMap<spmd::DistAttr> parameters;
};

/// Fills the body of `target` (an empty function with the graph function's
/// signature, inside a module carrying the mesh) from `source`.
llvm::Error buildPlanBody(mlir::func::FuncOp source, mlir::func::FuncOp target,
                          const LayoutChoice &choice, SegmentTable &segments);

} // namespace weft::baselines

#endif // WEFT_LIB_BASELINES_PLANBUILDER_H
