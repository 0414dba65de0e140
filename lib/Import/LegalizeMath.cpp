//===- LegalizeMath.cpp - Elementwise ops and contractions ----------------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"

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
    result = ctx.builder().create<OpTy>(ctx.loc(), *type, result, *rhs);
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

static llvm::Error clip(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  mlir::FloatAttr lo, hi;
  mlir::OpBuilder &b = ctx.builder();
  auto bound = [&](unsigned i, llvm::StringRef attr,
                   mlir::FloatAttr &out) -> llvm::Error {
    if (ctx.opset() < 11) {
      if (ctx.hasAttr(attr))
        out = b.getF64FloatAttr(ctx.attrFloat(attr, 0));
      return llvm::Error::success();
    }
    if (!ctx.hasInput(i))
      return llvm::Error::success();
    const ConstTensor *c = ctx.constantInput(i);
    if (!c || c->values.size() != 1)
      return ctx.unsupported("clip bounds must be scalar constants");
    out = b.getF64FloatAttr(c->values[0]);
    return llvm::Error::success();
  };
  if (auto err = bound(1, "min", lo))
    return err;
  if (auto err = bound(2, "max", hi))
    return err;
  ctx.setResult(0, b.create<g::ClipOp>(ctx.loc(), in->getType(), *in, lo, hi));
  return llvm::Error::success();
}

static llvm::Error cast(NodeContext &ctx) {
  return emitFromInput<g::CastOp, /*SkipIfSameType=*/true>(ctx);
}

static llvm::Error matmul(NodeContext &ctx) {
  auto lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs)
    return lhs.takeError();
  if (!rhs)
    return rhs.takeError();
  if (shapeOf(*lhs).size() < 2 || shapeOf(*rhs).size() < 2)
    return ctx.unsupported("matmul of a 1-d operand");
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  ctx.setResult(
      0, ctx.builder().create<g::MatMulOp>(ctx.loc(), *type, *lhs, *rhs));
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
  t["Pow"] = binary<g::PowOp>;
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
  t["Clip"] = clip;
  t["Cast"] = cast;
}
