//===- ShardingRuleBuilder.h - Helpers for ops' sharding rules ---*- C++
//-*-===//
//
// Private to dialects/Graph/IR: the vocabulary every op's
// `getShardingVariants` is written in (replicate, split every dim of a
// broadcasting op, propagate a partial value). docs/ShardingRules.md is the
// table these functions produce.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_IR_SHARDINGRULEBUILDER_H
#define WEFT_GRAPH_IR_SHARDINGRULEBUILDER_H

#include "Graph/IR/GraphInterfaces.h"
#include "mlir/IR/Operation.h"

namespace weft::graph::rules {

using Variants = llvm::SmallVectorImpl<ShardingVariant>;

/// The static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

/// Whether `v` is a tensor of floating-point elements (partial values must
/// be, docs/Design.md §3.2).
bool isFloat(mlir::Value v);

/// Whether the op's operands and results are all floating point.
bool allFloat(mlir::Operation *op);

/// Splitting a dim smaller than two devices' worth is never useful
/// (docs/Design.md §4, validity filters).
inline bool splittable(int64_t extent) { return extent >= 2; }

/// Appends a variant named `<op mnemonic>.<recipe>`.
ShardingVariant &addVariant(Variants &variants, mlir::Operation *op,
                            llvm::StringRef recipe,
                            llvm::ArrayRef<AxisLayout> operands,
                            llvm::ArrayRef<AxisLayout> results);

/// Appends `<op>.replicate`: every operand and result whole on every device.
void addReplicated(Variants &variants, mlir::Operation *op);

/// The layout of an operand broadcast (numpy, right-aligned) to `result`
/// when the result is split along `resultDim`: the matching operand dim, or
/// Identity where the operand lacks the dim or has extent 1 there.
AxisLayout broadcastLayout(llvm::ArrayRef<int64_t> operand,
                           llvm::ArrayRef<int64_t> result, int64_t resultDim);

/// For every splittable dim of result 0, appends `<op>.<recipe>` splitting
/// that dim of every result and the matching dim of every operand that has
/// it (broadcast operands stay Identity on dims they lack).
void addBroadcastSplits(Variants &variants, mlir::Operation *op,
                        llvm::StringRef recipe = "split",
                        bool needsGlobalOffset = false);

/// Appends `<op>.<recipe>` propagating a partial value: the operands in
/// `partial` are Reduce(combiner), those in `once` are whole and counted on
/// one device, the rest whole; every result is Reduce(combiner). Nothing is
/// appended unless those operands and every result are floating point.
void addPartial(Variants &variants, mlir::Operation *op,
                llvm::ArrayRef<unsigned> partial,
                Combiner combiner = Combiner::Sum,
                llvm::ArrayRef<unsigned> once = {},
                llvm::StringRef recipe = "partial");

/// Where a 2-d convolution's weight keeps its channels: the dim of output
/// channels (conv2d 0, conv_transpose2d 1; input channels are the other),
/// and, with groups, how many weight rows (dim 0) and output channels one
/// group holds.
struct ConvWeightLayout {
  unsigned outDim;
  int64_t rowsPerGroup;
  int64_t outPerGroup;
};

/// The variants of conv2d and conv_transpose2d (operands input, weight and
/// an optional bias): replicated, split batch, split output channels, split
/// input channels into partial sums, whole groups, and partial input or
/// weight.
void addConvVariants(Variants &variants, mlir::Operation *op,
                     llvm::ArrayRef<int64_t> input,
                     llvm::ArrayRef<int64_t> weight, int64_t group,
                     bool hasBias, ConvWeightLayout layout);

/// `addPartial` with every operand partial, for both combiners: ops that
/// only move or select elements commute with sum and with max.
void addMovementPartials(Variants &variants, mlir::Operation *op);

} // namespace weft::graph::rules

#endif // WEFT_GRAPH_IR_SHARDINGRULEBUILDER_H
