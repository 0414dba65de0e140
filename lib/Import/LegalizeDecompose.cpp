//===- LegalizeDecompose.cpp - Composer and the decomposition table -------===//
//
// The Composer of Decompose.h and the registration of every handler that
// legalises an ONNX op as a composition of existing graph ops
// (docs/Import.md, "Decompositions").
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "mlir/Dialect/Traits.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

mlir::Type import::elementOf(mlir::Value v) {
  return v.getType().cast<mlir::RankedTensorType>().getElementType();
}

llvm::Expected<int64_t> import::normalizeAxis(NodeContext &ctx, int64_t axis,
                                              int64_t rank,
                                              llvm::StringRef what) {
  if (axis < -rank || axis >= rank)
    return badInput("ONNX {0} node '{1}' has {2} {3}, outside [-{4}, {4})",
                    ctx.getNode().op_type(), ctx.getNode().name(), what, axis,
                    rank);
  return axis < 0 ? axis + rank : axis;
}

/// `values` (row-major, or one value for all) as an attribute of `type`.
/// f32 and i64, the types of large constants (masks of CumSum, ranges), are
/// built from plain arrays.
static mlir::DenseElementsAttr elementsAttr(mlir::RankedTensorType type,
                                            llvm::ArrayRef<double> values) {
  mlir::Type element = type.getElementType();
  if (element.isF32()) {
    std::vector<float> vals(values.begin(), values.end());
    return values.size() == 1 ? mlir::DenseElementsAttr::get(type, vals[0])
                              : mlir::DenseElementsAttr::get(
                                    type, llvm::ArrayRef<float>(vals));
  }
  if (element.isInteger(64)) {
    std::vector<int64_t> vals(values.begin(), values.end());
    return values.size() == 1 ? mlir::DenseElementsAttr::get(type, vals[0])
                              : mlir::DenseElementsAttr::get(
                                    type, llvm::ArrayRef<int64_t>(vals));
  }
  if (auto f = element.dyn_cast<mlir::FloatType>()) {
    llvm::SmallVector<llvm::APFloat> vals;
    for (double value : values) {
      llvm::APFloat v(value);
      bool lost;
      v.convert(f.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      vals.push_back(v);
    }
    return mlir::DenseElementsAttr::get(type, vals);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  llvm::SmallVector<llvm::APInt> vals;
  for (double value : values)
    vals.push_back(
        llvm::APInt(width, uint64_t(int64_t(value)), /*isSigned=*/true));
  return mlir::DenseElementsAttr::get(type, vals);
}

mlir::Value Composer::scalar(mlir::Type element, double value) {
  mlir::Value &known = scalars[{element.getAsOpaquePointer(), value}];
  if (!known)
    known = constant({}, element, {value});
  return known;
}

mlir::Value Composer::constant(llvm::ArrayRef<int64_t> shape,
                               mlir::Type element,
                               llvm::ArrayRef<double> values) {
  auto type = mlir::RankedTensorType::get(shape, element);
  return b.create<g::ConstantOp>(ctx.loc(), type, elementsAttr(type, values));
}

mlir::Value Composer::mask(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<bool> bits) {
  auto type = mlir::RankedTensorType::get(shape, b.getI1Type());
  return b.create<g::ConstantOp>(ctx.loc(), type,
                                 mlir::DenseElementsAttr::get(type, bits));
}

/// The numpy broadcast of two shapes. Shapes that do not broadcast give the
/// first; the op's verifier then names the node
/// (GraphImporter::verifyNewOps).
static llvm::SmallVector<int64_t> broadcast(llvm::ArrayRef<int64_t> a,
                                            llvm::ArrayRef<int64_t> b) {
  llvm::SmallVector<int64_t> shape;
  if (!mlir::OpTrait::util::getBroadcastedShape(a, b, shape))
    shape.assign(a.begin(), a.end());
  return shape;
}

mlir::RankedTensorType Composer::broadcastType(mlir::Value l, mlir::Value r,
                                               mlir::Type element) {
  return mlir::RankedTensorType::get(broadcast(shapeOf(l), shapeOf(r)),
                                     element);
}

mlir::Value Composer::add(mlir::Value l, mlir::Value r) {
  return binary<g::AddOp>(l, r);
}
mlir::Value Composer::sub(mlir::Value l, mlir::Value r) {
  return binary<g::SubOp>(l, r);
}
mlir::Value Composer::mul(mlir::Value l, mlir::Value r) {
  return binary<g::MulOp>(l, r);
}
mlir::Value Composer::div(mlir::Value l, mlir::Value r) {
  return binary<g::DivOp>(l, r);
}
mlir::Value Composer::min(mlir::Value l, mlir::Value r) {
  return binary<g::MinOp>(l, r);
}
mlir::Value Composer::max(mlir::Value l, mlir::Value r) {
  return binary<g::MaxOp>(l, r);
}

mlir::Value Composer::compare(llvm::StringRef predicate, mlir::Value l,
                              mlir::Value r) {
  return b.create<g::CompareOp>(ctx.loc(), broadcastType(l, r, b.getI1Type()),
                                l, r, b.getStringAttr(predicate));
}

mlir::Value Composer::select(mlir::Value cond, mlir::Value l, mlir::Value r) {
  auto shape = broadcast(shapeOf(cond), broadcast(shapeOf(l), shapeOf(r)));
  return b.create<g::SelectOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(l)), cond, l, r);
}

mlir::Value Composer::cast(mlir::Value x, mlir::Type element) {
  if (elementOf(x) == element)
    return x;
  return b.create<g::CastOp>(
      ctx.loc(), mlir::RankedTensorType::get(shapeOf(x), element), x);
}

mlir::Value Composer::reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return b.create<g::ReshapeOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(x)), x);
}

mlir::Value Composer::transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
  bool identity = true;
  llvm::SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    identity &= int64_t(i) == p;
    shape.push_back(shapeOf(x)[p]);
  }
  if (identity)
    return x;
  return b.create<g::TransposeOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(x)), x,
      b.getDenseI64ArrayAttr(perm));
}

mlir::Value Composer::expand(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return b.create<g::ExpandOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(x)), x);
}

mlir::Value Composer::slice(mlir::Value x, int64_t axis, int64_t start,
                            int64_t end) {
  llvm::SmallVector<int64_t> shape(shapeOf(x));
  if (start == 0 && end == shape[axis])
    return x;
  llvm::SmallVector<int64_t> lo(shape.size(), 0), hi(shape),
      step(shape.size(), 1);
  lo[axis] = start;
  hi[axis] = end;
  shape[axis] = end - start;
  return b.create<g::SliceOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(x)), x,
      b.getDenseI64ArrayAttr(lo), b.getDenseI64ArrayAttr(hi),
      b.getDenseI64ArrayAttr(step));
}

mlir::Value Composer::concat(llvm::ArrayRef<mlir::Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts[0];
  llvm::SmallVector<int64_t> shape(shapeOf(parts[0]));
  shape[axis] = 0;
  for (mlir::Value part : parts)
    shape[axis] += shapeOf(part)[axis];
  return b.create<g::ConcatOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(parts[0])), parts,
      b.getI64IntegerAttr(axis));
}

mlir::Value Composer::matmul(mlir::Value l, mlir::Value r) {
  llvm::ArrayRef<int64_t> ls = shapeOf(l), rs = shapeOf(r);
  llvm::SmallVector<int64_t> shape;
  if (ls.size() < 2 || rs.size() < 2 ||
      !mlir::OpTrait::util::getBroadcastedShape(ls.drop_back(2),
                                                rs.drop_back(2), shape))
    shape.clear();
  shape.push_back(ls.size() >= 2 ? ls[ls.size() - 2] : 1);
  shape.push_back(rs.empty() ? 1 : rs.back());
  return b.create<g::MatMulOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(l)), l, r);
}

mlir::Value Composer::normalize(mlir::Value x, int64_t axis, double epsilon) {
  llvm::ArrayRef<int64_t> normalized = shapeOf(x).drop_front(axis);
  mlir::Value ones = constant(normalized, elementOf(x), {1.0});
  mlir::Value zeros = constant(normalized, elementOf(x), {0.0});
  return b.create<g::LayerNormOp>(ctx.loc(), x.getType(), x, ones, zeros,
                                  b.getI64IntegerAttr(axis),
                                  b.getF64FloatAttr(epsilon));
}

llvm::Error Composer::finish(mlir::Value v, unsigned i) {
  auto type = ctx.resultType(i);
  if (!type) {
    // Ops newer than the checker's opset may have no inferred type.
    llvm::consumeError(type.takeError());
  } else if (*type != v.getType()) {
    std::string want, got;
    llvm::raw_string_ostream(want) << *type;
    llvm::raw_string_ostream(got) << v.getType();
    return badInput("ONNX {0} node '{1}' is inconsistent: ONNX infers {2} for "
                    "output {3}, its inputs give {4}",
                    ctx.getNode().op_type(), ctx.getNode().name(), want, i,
                    got);
  }
  ctx.setResult(i, v);
  return llvm::Error::success();
}

void import::registerDecomposeHandlers(HandlerTable &table) {
  registerDecomposeMathHandlers(table);
  registerDecomposeNNHandlers(table);
  registerDecomposeShapeHandlers(table);
  registerEinsumHandler(table);
  registerAttentionHandler(table);
  registerCausalConvHandler(table);
  registerLinearAttentionHandler(table);
  registerGridSampleHandler(table);
}
