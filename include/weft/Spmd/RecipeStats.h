//===- RecipeStats.h - All-reduces inside local recipes ------------*- C++
//-*-===//
//
// Some recipes all-reduce statistics inside an spmd.local (docs/Design.md
// §3.3): a softmax or layer_norm split along its reduced dim, a loss split by
// classes, a batch norm with synchronised statistics. The sharding rules
// declare them (graph::ShardingVariant::allReduces); this header says, for
// the plan evaluator, the ratio LP and the search alike, which statistics
// one op's per-axis variants all-reduce and how large each device's piece
// is, so the three price the same collectives.
//
// Model: each statistic is all-reduced (ring) over the variant's mesh axis
// in the forward pass; when a gradient flows, a sum statistic of a non-loss
// op has a dual all-reduce of the same size (the backward of a split
// softmax needs Σ dy·y, of a split layer_norm Σ dy·γ and Σ dy·γ·x̂, of a
// synchronised batch norm Σ dy and Σ dy·x̂); a max is a stability shift
// (stop-gradient) and a split loss's backward is local.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_RECIPESTATS_H
#define WEFT_SPMD_RECIPESTATS_H

#include "Graph/IR/GraphInterfaces.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace weft::spmd {

/// One statistic a recipe all-reduces along one mesh axis.
struct RecipeStat {
  unsigned axis = 0;
  graph::Combiner combiner = graph::Combiner::Sum;
  /// The statistic's global shape.
  llvm::SmallVector<int64_t, 4> shape;
  /// The operand whose shards the statistic follows (-1: none; the
  /// statistic is whole on every device), and per statistic dim the dim of
  /// that operand it takes its shard extent from (-1: its own extent).
  int operand = -1;
  llvm::SmallVector<int, 4> fromDim;
  /// The backward pass all-reduces the statistic's gradient too.
  bool hasDual = false;
};

/// The statistics all-reduced by graph op `op` computed with `perAxis[a]`
/// on mesh axis a (null: replicated); axes of size 1 (`axisSizes[a] <= 1`)
/// run no collective.
llvm::SmallVector<RecipeStat, 2>
recipeStats(mlir::Operation *op,
            llvm::ArrayRef<const graph::ShardingVariant *> perAxis,
            llvm::ArrayRef<int64_t> axisSizes);

/// The same for a plan's recipe: `variants` names one rule per axis,
/// joined by ", " (spmd.local's `variant`). Names the op does not have are
/// skipped (the verifier and weft-run reject such plans).
llvm::SmallVector<RecipeStat, 2> recipeStats(mlir::Operation *op,
                                             llvm::StringRef variants,
                                             llvm::ArrayRef<int64_t> axisSizes);

/// The graph op an spmd.local's recipe computes (the first op of its body
/// with sharding rules), or null.
mlir::Operation *recipeOp(LocalOp local);

/// Elements of one device's piece of `stat`, given that device's shard
/// extents of the operand the statistic follows (ignored when none).
double statElements(const RecipeStat &stat,
                    llvm::ArrayRef<int64_t> operandShard);

} // namespace weft::spmd

#endif // WEFT_SPMD_RECIPESTATS_H
