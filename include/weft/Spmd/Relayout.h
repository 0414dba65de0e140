//===- Relayout.h - The collectives between two distributions ----*- C++
//-*-===//
//
// Plans the ordered `spmd` relayout ops (shard, all_gather, all_reduce,
// reduce_scatter, all_to_all) that turn one distribution of a value into
// another. Per axis: id→gather(d) is a shard, gather→id an all_gather,
// sum/max→id an all_reduce, sum→gather(d) a reduce_scatter,
// gather(d)→gather(e) an all_to_all (or an all_gather then a shard when the
// all_to_all would break the nesting below), gather(d, s)→gather(d, s') an
// all_gather then a shard. id/gather→sum/max and sum↔max are impossible.
//
// Nesting: a dim split on several axes is laid out group by group, the
// groups keyed by the coordinates on those axes with axis 0 major
// (include/weft/Spmd/ShardGeometry.h). A collective on axis a may therefore
// only add or remove the minor-most split of a dim: a dim's splitting axes
// behave like a stack. The planner removes splits from the minor axis up and
// adds them from the major axis down, re-gathering minor splits that sit
// above a changing one, so that every intermediate distribution is valid
// (`verifyDist`: axes splitting one dim share a segment).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_RELAYOUT_H
#define WEFT_SPMD_RELAYOUT_H

#include "Spmd/IR/SpmdAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace weft::spmd {

/// The kind of one relayout step; each is one `spmd` op.
enum class RelayoutKind {
  Shard,
  AllGather,
  AllReduce,
  ReduceScatter,
  AllToAll
};

/// "shard", "all_gather", "all_reduce", "reduce_scatter", "all_to_all".
llvm::StringRef toString(RelayoutKind kind);

/// One collective: changes entry `axis` of `before`, giving `after`.
struct RelayoutStep {
  RelayoutKind kind;
  unsigned axis;
  DistAttr before, after;
};

/// The ordered collectives that turn `from` into `to` (same type/mesh rank),
/// empty when equal; failure (reason in *why) when impossible (id→sum,
/// gather→sum…). Every step's `after` is a valid distribution when `from`
/// and `to` are.
mlir::FailureOr<llvm::SmallVector<RelayoutStep, 4>>
planRelayout(DistAttr from, DistAttr to, std::string *why = nullptr);

/// Whether `dist` keeps the nesting rule for the interpreter and the
/// verifier: axes splitting one dim share a segment. (Structural: extents
/// are not checked; use `verifyDist` for that.)
bool isStructurallyValid(DistAttr dist);

/// Creates the ops of `steps` after the builder's insertion point, starting
/// from `value` (whose distribution is `steps.front().before`), and returns
/// the last result (`value` when `steps` is empty). All-gathers are
/// `padded`, all-reduces `ring`.
mlir::Value emitRelayout(mlir::OpBuilder &builder, mlir::Location loc,
                         mlir::Value value, llvm::ArrayRef<RelayoutStep> steps);

} // namespace weft::spmd

#endif // WEFT_SPMD_RELAYOUT_H
