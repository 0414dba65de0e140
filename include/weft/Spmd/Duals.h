//===- Duals.h - The backward of every spmd collective and strategy -*- C++
//-*-===//
//
// The dual table of docs/Design.md §3.4 (partial-sum convention) as data: for
// each relayout op the collective its backward runs, and for each parameter
// storage/update strategy the gradient synchronisation, re-gathers and which
// memory terms are sharded. The evaluator, the reference interpreter and the
// emitter read this table and nothing else; docs/Duals.md explains it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_DUALS_H
#define WEFT_SPMD_DUALS_H

#include "Spmd/IR/SpmdAttrs.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace weft::spmd {

/// What moves between devices for one relayout (forward or backward).
enum class Collective {
  /// Nothing (stop-gradient, or no gradient at all).
  None,
  /// Local: the shard's gradient is zero-padded to the whole (no traffic).
  ZeroPad,
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  Send,
  Recv,
};

/// "none", "zero_pad", "all_gather", "reduce_scatter", "all_reduce",
/// "all_to_all", "send", "recv".
llvm::StringRef toString(Collective c);

/// True when `c` moves bytes between devices.
inline bool communicates(Collective c) {
  return c != Collective::None && c != Collective::ZeroPad;
}

/// One row of the collective dual table.
struct CollectiveDual {
  /// The op's name, e.g. "spmd.all_gather".
  llvm::StringLiteral opName;
  /// What the op does in the forward pass.
  Collective forward;
  /// What its dual does to the gradient of its result in the backward pass.
  Collective backward;
  /// The backward runs from the result's layout back to the input's (an
  /// all_to_all back re-splits the gradient from dim j to dim i).
  bool reversesLayout;
};

/// The whole table, one row per relayout op.
llvm::ArrayRef<CollectiveDual> collectiveDuals();

/// The row of `op` (an spmd relayout op), or none for other ops. An
/// all_reduce whose input is a partial `max` (a softmax's stability shift)
/// has no dual: its backward is `None`.
std::optional<CollectiveDual> dualOf(mlir::Operation *op);

/// ParamStrategy (how a parameter is stored and updated) is the enum of
/// `spmd.parameter`'s `strategy` attribute (Spmd/IR/SpmdAttrs.h).

/// "replicated", "zero1", "zero2", "zero3", "buffer".
inline llvm::StringRef toString(ParamStrategy s) {
  return stringifyParamStrategy(s);
}
inline std::optional<ParamStrategy> parseParamStrategy(llvm::StringRef text) {
  return symbolizeParamStrategy(text);
}

/// One row of the strategy dual table: what a parameter costs per step
/// beyond the collectives written in the program. "id axes" are the mesh
/// axes on which the parameter's distribution is `id`; "gather axes" those
/// on which it is split (tensor parallelism, or ZeRO-3 storage).
struct StrategyDual {
  ParamStrategy strategy;
  /// The parameter has a gradient and optimizer state at all.
  bool trainable;
  /// Collective on the (shard's) gradient over the id axes after the
  /// backward pass: all_reduce (replicated, zero3), reduce_scatter (zero1,
  /// zero2) or none (buffer). Never over the gather axes: a parameter used
  /// sharded there (tensor parallelism) has a sharded gradient.
  Collective gradientSync;
  /// Collective over the id axes after the optimizer step: all_gather of
  /// the updated shard (zero1, zero2), none otherwise.
  Collective afterUpdate;
  /// The gradient is sharded over the id axes (zero2).
  bool gradientSharded;
  /// Optimizer state (and fp32 master weights) sharded over the id axes
  /// (zero1, zero2).
  bool optimizerSharded;
  /// Stored sharded over its gather axes and gathered before use: each
  /// program all_gather of the parameter runs again in the backward pass
  /// (unless the gathered copy is kept, which costs memory), and that
  /// all_gather's dual (a reduce_scatter) is the gradient's sync over the
  /// gather axes (zero3).
  bool regatherInBackward;
};

/// The whole table, one row per strategy.
llvm::ArrayRef<StrategyDual> strategyDuals();

/// The row of `s`.
const StrategyDual &dualOf(ParamStrategy s);

} // namespace weft::spmd

#endif // WEFT_SPMD_DUALS_H
