//===- LegalizeDecomposeMath.cpp - Elementwise ops from graph ops ---------===//
//
// Activations and elementwise ops without a graph op of their own, each a
// composition of graph elementwise ops (docs/Import.md, "Decompositions").
// Where a function has a kink, the composition's gradient there is the one
// PyTorch takes; where a naive form overflows (exp of a large input), a
// stable one is used, and an unselected branch never sees an input that
// would make its gradient inf · 0 = NaN.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

using Build = mlir::Value (*)(Composer &, mlir::Value);

bool isFloat(mlir::Value v) { return elementOf(v).isa<mlir::FloatType>(); }

/// The handler of an op with one input `x` and one output `Fn(x)`.
/// `FloatOnly` ops refuse integer inputs (the checker does not see bridged
/// opset 18+ nodes).
template <Build Fn, bool FloatOnly = true>
llvm::Error elementwise(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (FloatOnly && !isFloat(*x))
    return ctx.unsupported("integer input");
  Composer c(ctx);
  return c.finish(Fn(c, *x));
}

double attr(Composer &c, llvm::StringRef name, double dflt) {
  return c.context().attrFloat(name, dflt);
}

/// |x| with d|x|/dx = +1 at 0 (the select takes x there).
mlir::Value absSelect(Composer &c, mlir::Value x) {
  mlir::Value zero = c.scalarLike(x, 0);
  return c.select(c.compare("lt", x, zero), c.unary<g::NegOp>(x), x);
}

/// Abs: relu(x) + relu(-x) for floats (gradient 0 at 0, as PyTorch's sign);
/// integers (no relu kernel) select -x where x < 0.
mlir::Value absOf(Composer &c, mlir::Value x) {
  if (!isFloat(x))
    return absSelect(c, x);
  return c.add(c.unary<g::ReluOp>(x), c.unary<g::ReluOp>(c.unary<g::NegOp>(x)));
}

mlir::Value reciprocal(Composer &c, mlir::Value x) {
  return c.div(c.scalarLike(x, 1), x);
}

/// x where x > 0, else `negative` (LeakyRelu, PRelu): the gradient at 0 is
/// the negative slope, as PyTorch's.
mlir::Value positiveOr(Composer &c, mlir::Value x, mlir::Value negative) {
  return c.select(c.compare("gt", x, c.scalarLike(x, 0)), x, negative);
}

mlir::Value leakyRelu(Composer &c, mlir::Value x) {
  return positiveOr(c, x, c.mul(x, c.scalarLike(x, attr(c, "alpha", 0.01))));
}

mlir::Value thresholdedRelu(Composer &c, mlir::Value x) {
  mlir::Value alpha = c.scalarLike(x, attr(c, "alpha", 1.0));
  return c.select(c.compare("gt", x, alpha), x, c.scalarLike(x, 0));
}

/// Softplus log(1 + e^x) as max(x, 0) - log(sigmoid(|x|)): sigmoid(|x|) lies
/// in [0.5, 1), so nothing overflows. At 0 the max sends the gradient to x
/// (1) and |x| takes +1, giving 1 - 0.5 = sigmoid(0), the true derivative.
mlir::Value softplus(Composer &c, mlir::Value x) {
  mlir::Value pos = c.max(x, c.scalarLike(x, 0));
  mlir::Value logSig =
      c.unary<g::LogOp>(c.unary<g::SigmoidOp>(absSelect(c, x)));
  return c.sub(pos, logSig);
}

mlir::Value softsign(Composer &c, mlir::Value x) {
  return c.div(x, c.add(c.scalarLike(x, 1), absOf(c, x)));
}

/// max(0, min(1, alpha·x + beta)) as a clip.
mlir::Value hardSigmoidWith(Composer &c, mlir::Value x, double alpha,
                            double beta) {
  mlir::Value lin =
      c.add(c.mul(x, c.scalarLike(x, alpha)), c.scalarLike(x, beta));
  mlir::OpBuilder &b = c.context().builder();
  return b.create<g::ClipOp>(c.context().loc(), lin.getType(), lin,
                             b.getF64FloatAttr(0.0), b.getF64FloatAttr(1.0));
}

mlir::Value hardSigmoid(Composer &c, mlir::Value x) {
  return hardSigmoidWith(c, x, attr(c, "alpha", 0.2), attr(c, "beta", 0.5));
}

mlir::Value hardSwish(Composer &c, mlir::Value x) {
  return c.mul(x, hardSigmoidWith(c, x, 1.0 / 6.0, 0.5));
}

/// relu(x) + alpha·(exp(min(x, 0) / scale) - 1): ELU (scale 1) and CELU
/// (scale alpha). The exp never sees a positive input, and the gradient at
/// 0 is alpha / scale, as PyTorch's (its x <= 0 branch).
mlir::Value expLinear(Composer &c, mlir::Value x, double alpha, double scale) {
  mlir::Value neg = c.min(x, c.scalarLike(x, 0));
  if (scale != 1.0)
    neg = c.div(neg, c.scalarLike(x, scale));
  mlir::Value em1 = c.sub(c.unary<g::ExpOp>(neg), c.scalarLike(x, 1));
  return c.add(c.unary<g::ReluOp>(x), c.mul(em1, c.scalarLike(x, alpha)));
}

mlir::Value elu(Composer &c, mlir::Value x) {
  return expLinear(c, x, attr(c, "alpha", 1.0), 1.0);
}

mlir::Value celu(Composer &c, mlir::Value x) {
  double alpha = attr(c, "alpha", 1.0);
  return expLinear(c, x, alpha, alpha);
}

mlir::Value selu(Composer &c, mlir::Value x) {
  double alpha = attr(c, "alpha", 1.67326319217681884765625);
  double gamma = attr(c, "gamma", 1.05070102214813232421875);
  return c.mul(expLinear(c, x, alpha, 1.0), c.scalarLike(x, gamma));
}

mlir::Value mish(Composer &c, mlir::Value x) {
  return c.mul(x, c.unary<g::TanhOp>(softplus(c, x)));
}

/// Swish (opset 24): x · sigmoid(alpha · x).
mlir::Value swish(Composer &c, mlir::Value x) {
  double alpha = attr(c, "alpha", 1.0);
  mlir::Value arg = alpha == 1.0 ? x : c.mul(x, c.scalarLike(x, alpha));
  return c.mul(x, c.unary<g::SigmoidOp>(arg));
}

/// 1, -1 or 0 by two selects (no gradient, as the derivative is 0).
mlir::Value sign(Composer &c, mlir::Value x) {
  mlir::Value zero = c.scalarLike(x, 0);
  mlir::Value negOrZero =
      c.select(c.compare("lt", x, zero), c.scalarLike(x, -1), zero);
  return c.select(c.compare("gt", x, zero), c.scalarLike(x, 1), negOrZero);
}

/// PRelu(x, slope): the slope (a parameter or constant) broadcasts to x.
llvm::Error prelu(NodeContext &ctx) {
  auto x = ctx.input(0), slope = ctx.input(1);
  if (!x)
    return x.takeError();
  if (!slope)
    return slope.takeError();
  Composer c(ctx);
  return c.finish(positiveOr(c, *x, c.mul(*x, *slope)));
}

/// Sum and Mean: inputs added left to right with numpy broadcasting, the
/// mean divided by the input count.
template <bool Mean> llvm::Error variadicSum(NodeContext &ctx) {
  auto acc = ctx.input(0);
  if (!acc)
    return acc.takeError();
  Composer c(ctx);
  mlir::Value sum = *acc;
  int n = ctx.getNode().input_size();
  for (int i = 1; i < n; ++i) {
    auto next = ctx.input(i);
    if (!next)
      return next.takeError();
    sum = c.add(sum, *next);
  }
  if (Mean && n > 1)
    sum = c.div(sum, c.scalarLike(sum, n));
  return c.finish(sum);
}

/// CastLike(x, like): a cast to like's element type.
llvm::Error castLike(NodeContext &ctx) {
  return emitFromInput<g::CastOp, /*SkipIfSameType=*/true>(ctx);
}

} // namespace

void import::registerDecomposeMathHandlers(HandlerTable &t) {
  t["Abs"] = elementwise<absOf, /*FloatOnly=*/false>;
  t["Reciprocal"] = elementwise<reciprocal>;
  t["LeakyRelu"] = elementwise<leakyRelu>;
  t["PRelu"] = prelu;
  t["ThresholdedRelu"] = elementwise<thresholdedRelu>;
  t["Sum"] = variadicSum<false>;
  t["Mean"] = variadicSum<true>;
  t["CastLike"] = castLike;
  t["Softplus"] = elementwise<softplus>;
  t["Softsign"] = elementwise<softsign>;
  t["HardSigmoid"] = elementwise<hardSigmoid>;
  t["HardSwish"] = elementwise<hardSwish>;
  t["Elu"] = elementwise<elu>;
  t["Celu"] = elementwise<celu>;
  t["Selu"] = elementwise<selu>;
  t["Mish"] = elementwise<mish>;
  t["Swish"] = elementwise<swish>;
  t["Sign"] = elementwise<sign, /*FloatOnly=*/false>;
}
