//===- LegalizeMath.cpp - Elementwise ops and contractions ----------------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"
#include "mlir/Dialect/Traits.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

/// One operand in, one result out, result type from shape inference.
template <typename OpTy> static llvm::Error unary(NodeContext &ctx) {
  return emitFromInput<OpTy>(ctx);
}

/// Folds variadic inputs left to right with a binary op (ONNX Min/Max take
/// any number of inputs).
template <typename OpTy> static llvm::Error binary(NodeContext &ctx) {
  auto acc = ctx.input(0);
  if (!acc)
    return acc.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::Value result = *acc;
  for (int i = 1; i < ctx.getNode().input_size(); ++i) {
    auto rhs = ctx.input(i);
    if (!rhs)
      return rhs.takeError();
    // Each partial result has the broadcast shape of its own operands;
    // only the last has the node's shape.
    mlir::RankedTensorType step = *type;
    if (i + 1 < ctx.getNode().input_size()) {
      llvm::SmallVector<int64_t> shape;
      if (!mlir::OpTrait::util::getBroadcastedShape(shapeOf(result),
                                                    shapeOf(*rhs), shape))
        return ctx.unsupported("inputs whose shapes do not broadcast");
      step = mlir::RankedTensorType::get(shape, type->getElementType());
    }
    result = ctx.builder().create<OpTy>(ctx.loc(), step, result, *rhs);
  }
  ctx.setResult(0, result);
  return llvm::Error::success();
}

template <const char *Predicate> static llvm::Error compare(NodeContext &ctx) {
  auto lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs)
    return lhs.takeError();
  if (!rhs)
    return rhs.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  ctx.setResult(0, ctx.builder().create<g::CompareOp>(
                       ctx.loc(), *type, *lhs, *rhs,
                       ctx.builder().getStringAttr(Predicate)));
  return llvm::Error::success();
}

static constexpr char kEq[] = "eq", kLt[] = "lt", kGt[] = "gt";

static mlir::Value castTo(NodeContext &ctx, mlir::Value v, mlir::Type element) {
  auto t = v.getType().cast<mlir::RankedTensorType>();
  if (t.getElementType() == element)
    return v;
  return ctx.builder().create<g::CastOp>(
      ctx.loc(), mlir::RankedTensorType::get(t.getShape(), element), v);
}

/// ONNX Pow may raise a base to an exponent of another element type (a
/// float base to an integer power, or the reverse); the result has the
/// base's type. graph.pow takes one element type: the exponent is cast to a
/// float base's type, an integer base is raised in the exponent's float
/// type and the result cast back (ONNX's reference does the same).
static llvm::Error pow(NodeContext &ctx) {
  auto base = ctx.input(0), exponent = ctx.input(1);
  if (!base)
    return base.takeError();
  if (!exponent)
    return exponent.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  auto elementOf = [](mlir::Value v) {
    return v.getType().cast<mlir::RankedTensorType>().getElementType();
  };
  mlir::Type baseType = elementOf(*base), expType = elementOf(*exponent);
  mlir::Type compute = baseType.isa<mlir::FloatType>()  ? baseType
                       : expType.isa<mlir::FloatType>() ? expType
                                                        : baseType;
  mlir::Value result = ctx.builder().create<g::PowOp>(
      ctx.loc(), mlir::RankedTensorType::get(type->getShape(), compute),
      castTo(ctx, *base, compute), castTo(ctx, *exponent, compute));
  ctx.setResult(0, castTo(ctx, result, type->getElementType()));
  return llvm::Error::success();
}

static llvm::Error where(NodeContext &ctx) {
  auto c = ctx.input(0), lhs = ctx.input(1), rhs = ctx.input(2);
  if (!c || !lhs || !rhs)
    return llvm::joinErrors(c.takeError(),
                            llvm::joinErrors(lhs.takeError(), rhs.takeError()));
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  ctx.setResult(
      0, ctx.builder().create<g::SelectOp>(ctx.loc(), *type, *c, *lhs, *rhs));
  return llvm::Error::success();
}

/// Clip with constant bounds is graph.clip; a bound computed at run time
/// (a graph input, a parameter) becomes max(x, min) / min(·, max), which is
/// the same function (and gives that bound a gradient).
static llvm::Error clip(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  mlir::FloatAttr lo, hi;
  mlir::Value loValue, hiValue;
  mlir::OpBuilder &b = ctx.builder();
  auto bound = [&](unsigned i, llvm::StringRef attr, mlir::FloatAttr &out,
                   mlir::Value &value) -> llvm::Error {
    if (ctx.opset() < 11) {
      if (ctx.hasAttr(attr))
        out = b.getF64FloatAttr(ctx.attrFloat(attr, 0));
      return llvm::Error::success();
    }
    if (!ctx.hasInput(i))
      return llvm::Error::success();
    if (const ConstTensor *c = ctx.constantInput(i)) {
      if (c->values.size() != 1)
        return ctx.unsupported("clip bounds must be scalars");
      out = b.getF64FloatAttr(c->values[0]);
      return llvm::Error::success();
    }
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    if (v->getType().cast<mlir::RankedTensorType>().getNumElements() != 1)
      return ctx.unsupported("clip bounds must be scalars");
    value = *v;
    return llvm::Error::success();
  };
  if (auto err = bound(1, "min", lo, loValue))
    return err;
  if (auto err = bound(2, "max", hi, hiValue))
    return err;
  // Constant bounds with min > max clip everything to max.
  if (lo && hi && lo.getValueAsDouble() > hi.getValueAsDouble())
    lo = hi;
  // The lower bound first, then the upper: min(max(x, min), max), which
  // is max where min > max, as ONNX says.
  mlir::Type type = in->getType();
  mlir::Value x = *in;
  if (loValue)
    x = b.create<g::MaxOp>(ctx.loc(), type, x, loValue);
  else if (lo && hiValue)
    x = b.create<g::ClipOp>(ctx.loc(), type, x, std::exchange(lo, {}),
                            mlir::FloatAttr());
  if (hiValue)
    x = b.create<g::MinOp>(ctx.loc(), type, x, hiValue);
  if (lo || hi)
    x = b.create<g::ClipOp>(ctx.loc(), type, x, lo, hi);
  ctx.setResult(0, x);
  return llvm::Error::success();
}

static llvm::Error cast(NodeContext &ctx) {
  return emitFromInput<g::CastOp, /*SkipIfSameType=*/true>(ctx);
}

static mlir::Value reshapeTo(NodeContext &ctx, mlir::Value v,
                             llvm::ArrayRef<int64_t> shape) {
  auto t = v.getType().cast<mlir::RankedTensorType>();
  if (t.getShape() == shape)
    return v;
  return ctx.builder().create<g::ReshapeOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, t.getElementType()), v);
}

/// MatMul with numpy's rules for 1-d operands: a 1-d lhs is a row (a
/// leading 1), a 1-d rhs a column (a trailing 1); the added dims are
/// removed from the product by a reshape to the inferred type.
static llvm::Error matmul(NodeContext &ctx) {
  auto lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs)
    return lhs.takeError();
  if (!rhs)
    return rhs.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  llvm::SmallVector<int64_t> l(shapeOf(*lhs)), r(shapeOf(*rhs));
  if (l.empty() || r.empty())
    return ctx.unsupported("matmul of a scalar");
  if (l.size() == 1)
    l.insert(l.begin(), 1);
  if (r.size() == 1)
    r.push_back(1);
  llvm::SmallVector<int64_t> shape;
  if (!mlir::OpTrait::util::getBroadcastedShape(llvm::ArrayRef(l).drop_back(2),
                                                llvm::ArrayRef(r).drop_back(2),
                                                shape))
    return ctx.unsupported("batch dims that do not broadcast");
  shape.push_back(l[l.size() - 2]);
  shape.push_back(r.back());
  mlir::Value product = ctx.builder().create<g::MatMulOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, type->getElementType()),
      reshapeTo(ctx, *lhs, l), reshapeTo(ctx, *rhs, r));
  ctx.setResult(0, reshapeTo(ctx, product, type->getShape()));
  return llvm::Error::success();
}

static mlir::Value transpose2d(NodeContext &ctx, mlir::Value v) {
  auto t = v.getType().cast<mlir::RankedTensorType>();
  auto type = mlir::RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                                          t.getElementType());
  return ctx.builder().create<g::TransposeOp>(
      ctx.loc(), type, v, ctx.builder().getDenseI64ArrayAttr({1, 0}));
}

static mlir::Value scaled(NodeContext &ctx, mlir::Value v, double factor) {
  if (factor == 1.0)
    return v;
  auto t = v.getType().cast<mlir::RankedTensorType>();
  auto scalar = mlir::RankedTensorType::get({}, t.getElementType());
  auto c = ctx.builder().create<g::ConstantOp>(
      ctx.loc(), scalar,
      mlir::DenseElementsAttr::get(scalar, llvm::APFloat(float(factor))));
  return ctx.builder().create<g::MulOp>(ctx.loc(), t, v, c);
}

/// Gemm: Y = alpha·A'·B' + beta·C with optional transposes, as transpose,
/// matmul, scale and add.
static llvm::Error gemm(NodeContext &ctx) {
  auto a = ctx.input(0), b = ctx.input(1);
  if (!a)
    return a.takeError();
  if (!b)
    return b.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::Value lhs = ctx.attrInt("transA", 0) ? transpose2d(ctx, *a) : *a;
  mlir::Value rhs = ctx.attrInt("transB", 0) ? transpose2d(ctx, *b) : *b;
  mlir::Value y = ctx.builder().create<g::MatMulOp>(ctx.loc(), *type, lhs, rhs);
  y = scaled(ctx, y, ctx.attrFloat("alpha", 1.0));
  if (ctx.hasInput(2)) {
    auto c = ctx.input(2);
    if (!c)
      return c.takeError();
    y = ctx.builder().create<g::AddOp>(
        ctx.loc(), *type, y, scaled(ctx, *c, ctx.attrFloat("beta", 1.0)));
  }
  ctx.setResult(0, y);
  return llvm::Error::success();
}

void import::registerMathHandlers(HandlerTable &t) {
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  t["Add"] = binary<g::AddOp>;
  t["Sub"] = binary<g::SubOp>;
  t["Mul"] = binary<g::MulOp>;
  t["Div"] = binary<g::DivOp>;
  t["Pow"] = pow;
  t["Min"] = binary<g::MinOp>;
  t["Max"] = binary<g::MaxOp>;
  t["Equal"] = compare<kEq>;
  t["Less"] = compare<kLt>;
  t["Greater"] = compare<kGt>;
  t["Where"] = where;
  t["Relu"] = unary<g::ReluOp>;
  t["Tanh"] = unary<g::TanhOp>;
  t["Sigmoid"] = unary<g::SigmoidOp>;
  t["Erf"] = unary<g::ErfOp>;
  t["Sqrt"] = unary<g::SqrtOp>;
  t["Neg"] = unary<g::NegOp>;
  t["Exp"] = unary<g::ExpOp>;
  t["Log"] = unary<g::LogOp>;
  t["Sin"] = unary<g::SinOp>;
  t["Cos"] = unary<g::CosOp>;
  t["Tan"] = unary<g::TanOp>;
  t["Asin"] = unary<g::AsinOp>;
  t["Acos"] = unary<g::AcosOp>;
  t["Atan"] = unary<g::AtanOp>;
  t["Sinh"] = unary<g::SinhOp>;
  t["Cosh"] = unary<g::CoshOp>;
  t["Asinh"] = unary<g::AsinhOp>;
  t["Acosh"] = unary<g::AcoshOp>;
  t["Atanh"] = unary<g::AtanhOp>;
  t["Floor"] = unary<g::FloorOp>;
  t["Ceil"] = unary<g::CeilOp>;
  t["Round"] = unary<g::RoundOp>;
  t["Clip"] = clip;
  t["Cast"] = cast;
}
