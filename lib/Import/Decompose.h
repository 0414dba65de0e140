//===- Decompose.h - ONNX ops as compositions of graph ops -------*- C++
//-*-===//
//
// Some ONNX ops that training graphs use have no graph op of their own
// (Softplus, Trilu, CumSum, Einsum, GroupNormalization, ...). Their handlers
// (LegalizeDecompose*.cpp, LegalizeEinsum.cpp) build them from existing graph
// ops, so cost, sharding rules, the interpreter and gradients cover them with
// nothing new. A Composer creates those ops with the result types it derives
// (numpy broadcasting, reductions, reshapes); the value bound to the node's
// output is checked against the type ONNX's inference gave it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_DECOMPOSE_H
#define WEFT_LIB_IMPORT_DECOMPOSE_H

#include "Graph/IR/GraphOps.h"
#include "Importer.h"
#include <map>

namespace weft::import {

/// The element type of a ranked tensor value.
mlir::Type elementOf(mlir::Value v);

/// Creates graph ops for one node, deriving every result type.
class Composer {
public:
  explicit Composer(NodeContext &ctx) : ctx(ctx), b(ctx.builder()) {}

  NodeContext &context() { return ctx; }

  /// A rank-0 constant of `element` type.
  mlir::Value scalar(mlir::Type element, double value);
  /// A rank-0 constant of the element type of `like`.
  mlir::Value scalarLike(mlir::Value like, double value) {
    return scalar(elementOf(like), value);
  }
  /// A constant tensor (row-major `values`, or one value for all).
  mlir::Value constant(llvm::ArrayRef<int64_t> shape, mlir::Type element,
                       llvm::ArrayRef<double> values);
  /// A constant i1 tensor.
  mlir::Value mask(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<bool> bits);

  /// Elementwise `OpTy` with numpy broadcasting; the result takes the
  /// element type of `lhs`.
  template <typename OpTy> mlir::Value binary(mlir::Value lhs, mlir::Value rhs);
  mlir::Value add(mlir::Value l, mlir::Value r);
  mlir::Value sub(mlir::Value l, mlir::Value r);
  mlir::Value mul(mlir::Value l, mlir::Value r);
  mlir::Value div(mlir::Value l, mlir::Value r);
  mlir::Value min(mlir::Value l, mlir::Value r);
  mlir::Value max(mlir::Value l, mlir::Value r);
  /// `predicate` is one of graph.compare's (eq, ne, lt, le, gt, ge).
  mlir::Value compare(llvm::StringRef predicate, mlir::Value l, mlir::Value r);
  mlir::Value select(mlir::Value cond, mlir::Value l, mlir::Value r);
  template <typename OpTy> mlir::Value unary(mlir::Value x) {
    return b.create<OpTy>(ctx.loc(), x.getType(), x);
  }
  mlir::Value cast(mlir::Value x, mlir::Type element);

  /// Elided when the shape (or order) does not change.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value expand(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Elements [start, end) of `x` along `axis` (all of every other dim).
  mlir::Value slice(mlir::Value x, int64_t axis, int64_t start, int64_t end);
  /// `parts` (at least one, of one element type) joined along `axis`.
  mlir::Value concat(llvm::ArrayRef<mlir::Value> parts, int64_t axis);
  /// Reduction over sorted, non-negative `axes`.
  template <typename OpTy>
  mlir::Value reduce(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                     bool keepdims);
  /// Batched matrix product (both operands of rank >= 2).
  mlir::Value matmul(mlir::Value l, mlir::Value r);
  /// Layer normalisation over dims `axis`.. with unit scale and zero bias.
  mlir::Value normalize(mlir::Value x, int64_t axis, double epsilon);

  /// Binds output `i` to `v` once its type agrees with ONNX's inference
  /// (when inference typed the output).
  llvm::Error finish(mlir::Value v, unsigned i = 0);

private:
  mlir::RankedTensorType broadcastType(mlir::Value l, mlir::Value r,
                                       mlir::Type element);

  NodeContext &ctx;
  mlir::OpBuilder &b;
  /// Scalars made so far, by element type and value: one constant each.
  std::map<std::pair<const void *, double>, mlir::Value> scalars;
};

template <typename OpTy>
mlir::Value Composer::binary(mlir::Value lhs, mlir::Value rhs) {
  return b.create<OpTy>(ctx.loc(), broadcastType(lhs, rhs, elementOf(lhs)), lhs,
                        rhs);
}

template <typename OpTy>
mlir::Value Composer::reduce(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                             bool keepdims) {
  llvm::SmallVector<int64_t> shape;
  for (auto [d, n] : llvm::enumerate(shapeOf(x))) {
    bool reduced = llvm::is_contained(axes, int64_t(d));
    if (!reduced)
      shape.push_back(n);
    else if (keepdims)
      shape.push_back(1);
  }
  auto type = mlir::RankedTensorType::get(shape, elementOf(x));
  return b.create<OpTy>(ctx.loc(), type, x, b.getDenseI64ArrayAttr(axes),
                        b.getBoolAttr(keepdims));
}

/// An axis attribute or input in [-rank, rank) as a non-negative axis;
/// an error naming `what` when out of range.
llvm::Expected<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis,
                                      int64_t rank, llvm::StringRef what);

void registerDecomposeMathHandlers(HandlerTable &table);
void registerDecomposeNNHandlers(HandlerTable &table);
void registerDecomposeShapeHandlers(HandlerTable &table);
void registerEinsumHandler(HandlerTable &table);
/// Attention (opsets 23-25), LegalizeAttention.cpp.
void registerAttentionHandler(HandlerTable &table);
/// CausalConvWithState (opset 27), LegalizeCausalConv.cpp.
void registerCausalConvHandler(HandlerTable &table);
/// LinearAttention (opset 27), LegalizeLinearAttention.cpp.
void registerLinearAttentionHandler(HandlerTable &table);
/// GridSample (opsets 16-22), LegalizeGridSample.cpp.
void registerGridSampleHandler(HandlerTable &table);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_DECOMPOSE_H
