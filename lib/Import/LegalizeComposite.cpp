//===- LegalizeComposite.cpp - Hardmax, LpNormalization, LRN, ... --------===//
//
// ONNX ops without a graph op of their own (Hardmax, LpNormalization,
// Shrink, LRN, MeanVarianceNormalization, SwiGLU), built from existing graph
// ops with the Composer of Decompose.h (docs/Import.md, "Decompositions").
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// |x| as relu(x) + relu(−x): the gradient at 0 is 0, as PyTorch's.
mlir::Value absOf(Composer &c, mlir::Value x) {
  return c.add(c.unary<g::ReluOp>(x), c.unary<g::ReluOp>(c.unary<g::NegOp>(x)));
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere. The first
/// maximum is found as ArgMax's is: a constant ramp n − 1 − i along the
/// axis, selected where x equals the axis maximum (−1 elsewhere), reduced
/// by max; the result selects 1 where the ramp equals it. Before opset 13
/// the input is seen as 2-d (dims before the axis × the rest) and the
/// hardmax taken along the second dim. Piecewise constant: the result is a
/// select of constants, so no gradient reaches x (its gradient is 0
/// almost everywhere).
llvm::Error hardmax(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  if (!elementOf(*in).isa<mlir::FloatType>())
    return ctx.unsupported("an integer input");
  Composer c(ctx);
  llvm::ArrayRef<int64_t> shape = shapeOf(*in);
  int64_t rank = shape.size();
  bool coerced = ctx.opset() < 13;
  auto axis =
      normalizeAxis(ctx, ctx.attrInt("axis", coerced ? 1 : -1), rank, "axis");
  if (!axis)
    return axis.takeError();
  mlir::Value x = *in;
  int64_t a = *axis;
  if (coerced) {
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < a ? rows : cols) *= shape[d];
    x = c.reshape(x, {rows, cols});
    a = 1;
  }
  llvm::SmallVector<int64_t> rampShape(shapeOf(x).size(), 1);
  int64_t n = shapeOf(x)[a];
  rampShape[a] = n;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(double(n - 1 - i));
  mlir::Type i64 = ctx.builder().getI64Type();
  mlir::Value ramp = c.constant(rampShape, i64, values);
  mlir::Value atMax =
      c.compare("eq", x, c.reduce<g::ReduceMaxOp>(x, {a}, /*keepdims=*/true));
  mlir::Value candidates = c.select(atMax, ramp, c.scalar(i64, -1));
  mlir::Value first =
      c.reduce<g::ReduceMaxOp>(candidates, {a}, /*keepdims=*/true);
  mlir::Value y = c.select(c.compare("eq", ramp, first), c.scalarLike(x, 1),
                           c.scalarLike(x, 0));
  return c.finish(c.reshape(y, shape));
}

/// LpNormalization: x / ‖x‖_p along the axis, p = 1 (Σ |x|) or 2
/// (√Σ x²). A zero norm gives 0, as ONNX's reference: a sum s of 0 is
/// replaced by 1 before the root and the division (the slice is all zeros
/// there), so neither sees it and no gradient is 0 · ∞.
llvm::Error lpNormalization(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (!elementOf(*x).isa<mlir::FloatType>())
    return ctx.unsupported("an integer input");
  int64_t p = ctx.attrInt("p", 2);
  if (p != 1 && p != 2)
    return ctx.unsupported("p = " + std::to_string(p) +
                           " (ONNX defines 1 and 2)");
  auto axis =
      normalizeAxis(ctx, ctx.attrInt("axis", -1), shapeOf(*x).size(), "axis");
  if (!axis)
    return axis.takeError();
  Composer c(ctx);
  mlir::Value sum = c.reduce<g::ReduceSumOp>(
      p == 1 ? absOf(c, *x) : c.mul(*x, *x), {*axis}, /*keepdims=*/true);
  mlir::Value safe = c.select(c.compare("eq", sum, c.scalarLike(sum, 0)),
                              c.scalarLike(sum, 1), sum);
  mlir::Value norm = p == 1 ? safe : c.unary<g::SqrtOp>(safe);
  return c.finish(c.div(*x, norm));
}

/// Shrink: x + bias below −lambd, x − bias above lambd, 0 between.
llvm::Error shrink(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  Composer c(ctx);
  double lambd = ctx.attrFloat("lambd", 0.5), bias = ctx.attrFloat("bias", 0);
  mlir::Value above =
      c.select(c.compare("gt", *x, c.scalarLike(*x, lambd)),
               c.sub(*x, c.scalarLike(*x, bias)), c.scalarLike(*x, 0));
  return c.finish(c.select(c.compare("lt", *x, c.scalarLike(*x, -lambd)),
                           c.add(*x, c.scalarLike(*x, bias)), above));
}

/// LRN over N×C×D1×...: the sum of squares over the channel window
/// [c − ⌊(size−1)/2⌋, c + ⌈(size−1)/2⌉] (clipped to [0, C)) is x² with the
/// channels moved last times a constant C×C band matrix of ones, moved
/// back; y = x / (bias + alpha/size · sum)^beta.
llvm::Error lrn(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (!elementOf(*x).isa<mlir::FloatType>())
    return ctx.unsupported("an integer input");
  llvm::ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = shape.size();
  int64_t size = ctx.attrInt("size", 0);
  if (rank < 3)
    return ctx.unsupported("an input of rank below 3");
  if (size <= 0)
    return ctx.unsupported("size " + std::to_string(size) +
                           " (must be positive)");
  Composer c(ctx);
  int64_t channels = shape[1];
  int64_t below = (size - 1) / 2, above = size - 1 - below;
  // band[i][c] = 1 when channel i is in channel c's window.
  std::vector<double> band(channels * channels, 0.0);
  for (int64_t i = 0; i < channels; ++i)
    for (int64_t ch = 0; ch < channels; ++ch)
      if (i >= ch - below && i <= ch + above)
        band[i * channels + ch] = 1.0;
  llvm::SmallVector<int64_t> last, back;
  last.push_back(0);
  for (int64_t d = 2; d < rank; ++d)
    last.push_back(d);
  last.push_back(1);
  back.assign(rank, 0);
  for (int64_t d = 0; d < rank; ++d)
    back[last[d]] = d;
  mlir::Value squares = c.transpose(c.mul(*x, *x), last);
  mlir::Value sums = c.transpose(
      c.matmul(squares, c.constant({channels, channels}, elementOf(*x), band)),
      back);
  double alpha = ctx.attrFloat("alpha", 1e-4),
         beta = ctx.attrFloat("beta", 0.75);
  mlir::Value base = c.add(c.mul(sums, c.scalarLike(*x, alpha / double(size))),
                           c.scalarLike(*x, ctx.attrFloat("bias", 1.0)));
  mlir::Value denom = c.binary<g::PowOp>(base, c.scalarLike(*x, beta));
  return c.finish(c.div(*x, denom));
}

/// MeanVarianceNormalization: (x − E[x]) / (√(E[x²] − E[x]²) + 1e-9) over
/// `axes` (default 0, 2, 3), ONNX's function body.
llvm::Error meanVarianceNormalization(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (!elementOf(*x).isa<mlir::FloatType>())
    return ctx.unsupported("an integer input");
  int64_t rank = shapeOf(*x).size();
  std::vector<int64_t> given = ctx.hasAttr("axes")
                                   ? ctx.attrInts("axes")
                                   : std::vector<int64_t>{0, 2, 3};
  llvm::SmallVector<int64_t> axes;
  for (int64_t a : given) {
    auto axis = normalizeAxis(ctx, a, rank, "axis");
    if (!axis)
      return axis.takeError();
    if (!llvm::is_contained(axes, *axis))
      axes.push_back(*axis);
  }
  llvm::sort(axes);
  Composer c(ctx);
  mlir::Value mean = c.reduce<g::ReduceMeanOp>(*x, axes, /*keepdims=*/true);
  mlir::Value meanOfSquares =
      c.reduce<g::ReduceMeanOp>(c.mul(*x, *x), axes, /*keepdims=*/true);
  mlir::Value variance = c.sub(meanOfSquares, c.mul(mean, mean));
  mlir::Value deviation =
      c.add(c.unary<g::SqrtOp>(variance), c.scalarLike(*x, 1e-9));
  return c.finish(c.div(c.sub(*x, mean), deviation));
}

/// SwiGLU (opset 28): a · sigmoid(alpha · a) · b for gate a and value b of
/// one shape.
llvm::Error swiGlu(NodeContext &ctx) {
  auto a = ctx.input(0), b = ctx.input(1);
  if (!a)
    return a.takeError();
  if (!b)
    return b.takeError();
  if (!elementOf(*a).isa<mlir::FloatType>() || a->getType() != b->getType())
    return ctx.unsupported("gate and value of different types or shapes");
  Composer c(ctx);
  double alpha = ctx.attrFloat("alpha", 1.0);
  mlir::Value arg = alpha == 1.0 ? *a : c.mul(*a, c.scalarLike(*a, alpha));
  return c.finish(c.mul(c.mul(*a, c.unary<g::SigmoidOp>(arg)), *b));
}

} // namespace

void import::registerCompositeHandlers(HandlerTable &t) {
  t["LRN"] = lrn;
  t["MeanVarianceNormalization"] = meanVarianceNormalization;
  t["SwiGLU"] = swiGlu;
  t["Hardmax"] = hardmax;
  t["LpNormalization"] = lpNormalization;
  t["Shrink"] = shrink;
}
