//===- GraphCost.h - Work of graph ops as functions of shapes ----*- C++
//-*-===//
//
// The value types of CostOpInterface and the helpers every op's `getCost`
// is composed from. Counts are per training step for the shapes given:
// callers pass global shapes for the whole op or shard shapes for one device.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_IR_GRAPHCOST_H
#define WEFT_GRAPH_IR_GRAPHCOST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace mlir {
class Operation;
class Type;
} // namespace mlir

namespace weft::graph {

/// The class of an op for the device efficiency tables of the cost model.
enum class OpClass { Free, MatMul, Conv, Elementwise, Reduction, Gather };

llvm::StringRef stringifyOpClass(OpClass c);

/// A static shape and the bytes per element of its tensor.
struct TensorShape {
  llvm::SmallVector<int64_t, 4> dims;
  unsigned elementBytes = 4;

  int64_t numElements() const;
  int64_t bytes() const { return numElements() * elementBytes; }
  /// The shape of a ranked tensor type (element bytes rounded up).
  static TensorShape of(mlir::Type type);
};

/// The shapes an op's cost is evaluated at: one per operand and result.
struct ShardShapes {
  llvm::SmallVector<TensorShape, 4> operands;
  llvm::SmallVector<TensorShape, 2> results;

  /// The global shapes of `op`.
  static ShardShapes of(mlir::Operation *op);
};

/// The work of one op (docs/Design.md §3.1).
struct OpCost {
  OpClass opClass = OpClass::Free;
  /// Floating-point operations of the forward pass.
  double forwardFlops = 0;
  /// Floating-point operations of the backward pass (all input gradients).
  double backwardFlops = 0;
  /// Bytes read and written by the forward pass.
  double forwardBytes = 0;
  /// Bytes read and written by the backward pass.
  double backwardBytes = 0;
  /// Bytes of activations the backward pass needs kept from the forward.
  double keptBytes = 0;

  OpCost &operator+=(const OpCost &other);
};

/// What an elementwise op's backward needs kept.
enum class Keep { Nothing, Input, Result };

OpCost freeCost();
OpCost unaryCost(const ShardShapes &s, double fwdPerElem, double bwdPerElem,
                 Keep keep);
OpCost binaryCost(const ShardShapes &s, double fwdPerElem, double bwdPerElem,
                  bool keepInputs);
OpCost matmulCost(const ShardShapes &s);
OpCost conv2dCost(const ShardShapes &s, int64_t group);
OpCost poolCost(const ShardShapes &s, llvm::ArrayRef<int64_t> kernel);
OpCost softmaxCost(const ShardShapes &s);
OpCost normCost(const ShardShapes &s);
OpCost reduceCost(const ShardShapes &s);
OpCost movementCost(const ShardShapes &s);
OpCost gatherCost(const ShardShapes &s);
OpCost dropoutCost(const ShardShapes &s);
OpCost top2GatingCost(const ShardShapes &s);
/// conv_transpose2d: each input element times a (O/group)·KH·KW kernel.
OpCost convTranspose2dCost(const ShardShapes &s);
/// resize: a dot product over the interpolation's taps per result element
/// (none for `nearest`, a pure copy).
OpCost resizeCost(const ShardShapes &s, llvm::StringRef mode, bool antialias);
/// scatter_elements, scatter_nd: a copy of the data and one combine per
/// update.
OpCost scatterCost(const ShardShapes &s, llvm::StringRef reduction);

} // namespace weft::graph

#endif // WEFT_GRAPH_IR_GRAPHCOST_H
