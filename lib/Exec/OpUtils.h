//===- OpUtils.h - Attribute and shape helpers for op dispatch --*- C++ -*-===//

#ifndef WEFT_LIB_EXEC_OPUTILS_H
#define WEFT_LIB_EXEC_OPUTILS_H

#include "Graph/IR/GraphOps.h"
#include "mlir/IR/Operation.h"
#include "weft/Exec/Conv.h"
#include "weft/Exec/Loss.h"
#include "weft/Exec/Pool.h"
#include "weft/Exec/Tensor.h"
#include "weft/Exec/Unary.h"
#include "llvm/Support/Error.h"

namespace weft::exec {

/// The static shape of a value.
inline Shape shapeOf(mlir::Value v) {
  auto shape = v.getType().cast<mlir::RankedTensorType>().getShape();
  return Shape(shape.begin(), shape.end());
}

/// A non-negative axis from an I64Attr getter (LLVM 16 returns uint64_t).
inline int64_t axisOf(uint64_t axis, int64_t rank) {
  int64_t a = int64_t(axis);
  return a < 0 ? a + rank : a;
}

/// "graph.gather (\"name\")" for messages: the op and its location name.
std::string describeOp(mlir::Operation *op);

/// The elementwise unary kernel a graph op is (sqrt … round), if it is one:
/// the forward and the backward dispatch share this map.
std::optional<UnaryKind> unaryKindOf(mlir::Operation *op);

/// Checks that every index is in [−limit, limit) (or [0, limit) when
/// negative indices are not allowed), skipping `ignore`.
llvm::Error checkIndexRange(mlir::Operation *op, const Tensor &indices,
                            int64_t limit, bool allowNegative,
                            std::optional<int64_t> ignore,
                            llvm::StringRef what);

Conv2dParams convParams(graph::Conv2dOp op);
PoolParams poolParams(graph::MaxPoolOp op);
PoolParams poolParams(graph::AvgPoolOp op);

/// The loss parameters of a cross_entropy or nll_loss op.
template <typename LossOp> llvm::Expected<LossParams> lossParams(LossOp op) {
  std::optional<LossReduction> reduction =
      parseLossReduction(op.getReduction());
  if (!reduction)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown loss reduction '" +
                                       op.getReduction().str() + "'");
  LossParams params;
  params.reduction = *reduction;
  if (std::optional<uint64_t> ignore = op.getIgnoreIndex())
    params.ignoreIndex = int64_t(*ignore);
  return params;
}

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_OPUTILS_H
