//===- GraphInterfaces.h - Cost and sharding-rule interfaces -----*- C++
//-*-===//
//
// The value types of ShardingRuleOpInterface are plain structs: the
// evaluator, the reference interpreter and the synthesizer read them without
// knowing any op. docs/ShardingRules.md lists every op's variants.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_IR_GRAPHINTERFACES_H
#define WEFT_GRAPH_IR_GRAPHINTERFACES_H

#include "Graph/IR/GraphCost.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/STLExtras.h"
#include <string>

namespace weft::graph {

/// How the per-device parts of a partial value add up to the value.
enum class Combiner { Sum, Max };

llvm::StringRef stringifyCombiner(Combiner c);

/// How one tensor of a sharding variant is laid out along one mesh axis
/// (docs/Design.md §3.2): whole on every device, split along `dim`, or a
/// partial value that must be combined.
struct AxisLayout {
  enum class Kind { Identity, Gather, Reduce };
  Kind kind = Kind::Identity;
  /// The split dimension for Gather.
  int64_t dim = -1;
  /// For Gather: every shard size along `dim`, in that dim's units, is a
  /// multiple of `align` (a reshape alignment or whole convolution groups).
  int64_t align = 1;
  /// For Reduce: how the devices' parts combine.
  Combiner combiner = Combiner::Sum;

  static AxisLayout identity() { return {}; }
  static AxisLayout gather(int64_t dim, int64_t align = 1) {
    return {Kind::Gather, dim, align, Combiner::Sum};
  }
  static AxisLayout reduce(Combiner combiner = Combiner::Sum) {
    return {Kind::Reduce, -1, 1, combiner};
  }

  bool isIdentity() const { return kind == Kind::Identity; }
  bool isGather() const { return kind == Kind::Gather; }
  bool isReduce() const { return kind == Kind::Reduce; }

  bool operator==(const AxisLayout &o) const {
    return kind == o.kind && dim == o.dim && align == o.align &&
           (kind != Kind::Reduce || combiner == o.combiner);
  }
  bool operator!=(const AxisLayout &o) const { return !(*this == o); }
};

/// Prints `id`, `gather(d)`, `gather(d, align a)`, `sum` or `max`.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const AxisLayout &l);

/// An all-reduce the local recipe performs itself, on a statistic rather
/// than on an operand or result: e.g. the row maximum and row sum of a
/// softmax over a split dimension.
struct RecipeAllReduce {
  Combiner combiner = Combiner::Sum;
  /// The statistic's global shape (its element type is the op's).
  llvm::SmallVector<int64_t, 4> shape;

  bool operator==(const RecipeAllReduce &o) const {
    return combiner == o.combiner && shape == o.shape;
  }
};

/// One way to compute an op on distributed operands along ONE mesh axis
/// (docs/Design.md §3.3). Every Gather layout of a variant is split with one
/// ratio vector: a device holding the fraction r of the axis holds
/// r · extent of each split dim (a multiple of its `align`). Collect
/// variants in a `SmallVector<ShardingVariant, 8>`: the struct is larger
/// than SmallVector's default inline budget allows.
struct ShardingVariant {
  /// The recipe, `<op>.<recipe>` (e.g. `matmul.split-contraction`); the
  /// `variant` of an `spmd.local` and the key of docs/ShardingRules.md.
  std::string name;
  /// Preconditions: one layout per operand (absent optional operands have
  /// none).
  llvm::SmallVector<AxisLayout, 4> operands;
  /// Postconditions: one layout per result.
  llvm::SmallVector<AxisLayout, 2> results;
  /// Whether the local recipe needs the shard's global offset (vocabulary
  /// masks, target picking, dropout keyed by global index, slice windows).
  bool needsGlobalOffset = false;
  /// Identity operands used whole on one device of the axis and as zeros on
  /// the others, so that a partial (Reduce) result counts them once: a bias
  /// added once after a contraction split.
  llvm::SmallVector<unsigned, 1> onceOperands;
  /// All-reduces of statistics inside the recipe, in order.
  llvm::SmallVector<RecipeAllReduce, 2> allReduces;

  bool isOnceOperand(unsigned i) const {
    return llvm::is_contained(onceOperands, i);
  }
  /// Whether any result is a partial value.
  bool hasPartialResult() const {
    return llvm::any_of(results,
                        [](const AxisLayout &l) { return l.isReduce(); });
  }
};

/// Prints a variant on one line, e.g.
/// `matmul.split-contraction: (gather(2), gather(0)) -> (sum)`.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const ShardingVariant &v);

} // namespace weft::graph

#include "Graph/IR/GraphInterfaces.h.inc"

#endif // WEFT_GRAPH_IR_GRAPHINTERFACES_H
