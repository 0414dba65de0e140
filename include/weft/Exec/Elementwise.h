//===- Elementwise.h - Broadcasting binary, compare, select, cast -*- C++
//-*-===//
//
// Kernels are plain functions on Tensors so the SPMD interpreter can run
// them on shards. Shapes are assumed valid (the graph verifiers check them).
// Backward functions return the vector-Jacobian product for each operand,
// summed over the dimensions the operand was broadcast along.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_ELEMENTWISE_H
#define WEFT_EXEC_ELEMENTWISE_H

#include "weft/Exec/Tensor.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace weft::exec {

/// The numpy broadcast of two shapes (assumed compatible).
Shape broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);
/// `x` broadcast to `shape` (graph.expand).
Tensor broadcastTo(const Tensor &x, llvm::ArrayRef<int64_t> shape);
/// Sums a float tensor over the dimensions along which a tensor of `shape`
/// was broadcast to produce it (the backward of broadcastTo).
Tensor reduceToShape(const Tensor &g, llvm::ArrayRef<int64_t> shape);

enum class BinaryKind { Add, Sub, Mul, Div, Pow, Min, Max };

/// `lhs op rhs` with broadcasting; float or integer operands of one kind.
Tensor binary(BinaryKind kind, const Tensor &lhs, const Tensor &rhs);

struct BinaryGrads {
  Tensor lhs, rhs;
};
/// Gradients of both operands given the result's gradient. Min/max send the
/// gradient to the lhs on ties.
BinaryGrads binaryBackward(BinaryKind kind, const Tensor &lhs,
                           const Tensor &rhs, const Tensor &result,
                           const Tensor &dResult);

enum class ComparePredicate { Eq, Ne, Lt, Le, Gt, Ge };
std::optional<ComparePredicate> parseComparePredicate(llvm::StringRef name);
/// An i1 tensor; no gradient flows through a comparison.
Tensor compare(ComparePredicate predicate, const Tensor &lhs,
               const Tensor &rhs);

/// `condition ? lhs : rhs` with broadcasting of all three.
Tensor select(const Tensor &condition, const Tensor &lhs, const Tensor &rhs);
/// Gradients of lhs and rhs (the condition has none).
BinaryGrads selectBackward(const Tensor &condition,
                           llvm::ArrayRef<int64_t> lhsShape,
                           llvm::ArrayRef<int64_t> rhsShape,
                           const Tensor &dResult);

/// Converts elements to `type` (float → int truncates toward zero).
Tensor cast(const Tensor &x, ElementType type);

} // namespace weft::exec

#endif // WEFT_EXEC_ELEMENTWISE_H
