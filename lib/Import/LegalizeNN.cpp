//===- LegalizeNN.cpp - Convolution, normalisation, reductions, losses ---===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"
#include "Window.h"
#include <cmath>

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

/// Collects inputs [0, n) as values, stopping at the first error.
static llvm::Error inputs(NodeContext &ctx, unsigned n,
                          llvm::SmallVectorImpl<mlir::Value> &out) {
  for (unsigned i = 0; i < n; ++i) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    out.push_back(*v);
  }
  return llvm::Error::success();
}

static llvm::Error conv(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  llvm::ArrayRef<int64_t> weightShape = shapeOf(in[1]);
  if (weightShape.size() != shapeOf(in[0]).size() || weightShape.size() < 3)
    return ctx.unsupported("input and kernel of different ranks");
  auto window =
      windowOf(ctx, in[0],
               std::vector<int64_t>(weightShape.begin() + 2, weightShape.end()),
               /*maxSpatial=*/2);
  if (!window)
    return window.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  auto bias = ctx.optionalInput(2);
  if (!bias)
    return bias.takeError();
  mlir::OpBuilder &b = ctx.builder();
  mlir::Value result = b.create<g::Conv2dOp>(
      ctx.loc(), liftedType(*type), withUnitHeight(ctx, in[0]),
      withUnitHeight(ctx, in[1]), *bias,
      b.getDenseI64ArrayAttr(window->strides),
      b.getDenseI64ArrayAttr(window->pads),
      b.getDenseI64ArrayAttr(window->dilations),
      b.getI64IntegerAttr(ctx.attrInt("group", 1)));
  setWindowResult(ctx, result, *type);
  return llvm::Error::success();
}

static llvm::Error batchNorm(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 5, in))
    return err;
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  // Opset 14+ says training_mode; older training exports have 5 outputs.
  bool training = ctx.attrInt("training_mode", 0) ||
                  (ctx.opset() < 14 && ctx.getNode().output_size() > 1);
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0, b.create<g::BatchNormOp>(
                       ctx.loc(), *type, in[0], in[1], in[2], in[3], in[4],
                       b.getF64FloatAttr(ctx.attrFloat("epsilon", 1e-5)),
                       b.getF64FloatAttr(ctx.attrFloat("momentum", 0.9)),
                       b.getBoolAttr(training)));
  // The updated running statistics are state, not part of the loss.
  ctx.setResult(1, in[3]);
  ctx.setResult(2, in[4]);
  return llvm::Error::success();
}

template <typename OpTy> static llvm::Error softmaxLike(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  int64_t rank = shapeOf(*in).size();
  int64_t axis = ctx.attrInt("axis", ctx.opset() < 13 ? 1 : -1);
  if (axis < 0)
    axis += rank;
  // Before opset 13 the op flattened to 2-d at `axis`; that only agrees with
  // a per-axis softmax on the last dimension.
  if (ctx.opset() < 13 && axis != rank - 1)
    return ctx.unsupported("pre-opset-13 softmax over more than one dim");
  ctx.setResult(
      0, ctx.builder().create<OpTy>(ctx.loc(), in->getType(), *in,
                                    ctx.builder().getI64IntegerAttr(axis)));
  return llvm::Error::success();
}

static bool hasOutput(NodeContext &ctx, int i) {
  return i < ctx.getNode().output_size() && !ctx.getNode().output(i).empty();
}

/// LayerNormalization's optional outputs Mean and InvStdDev (the statistics
/// over the normalised dims, kept as size-1 dims), computed beside the
/// fused op when the model names them: reduce_mean, and
/// rsqrt(reduce_mean((x − mean)²) + epsilon).
static llvm::Error layerNormStatistics(NodeContext &ctx, mlir::Value x,
                                       int64_t axis, double epsilon) {
  if (!hasOutput(ctx, 1) && !hasOutput(ctx, 2))
    return llvm::Error::success();
  auto meanType = ctx.resultType(1);
  if (!hasOutput(ctx, 1)) {
    // Only InvStdDev is named: its type is the statistics' type.
    llvm::consumeError(meanType.takeError());
    meanType = ctx.resultType(2);
  }
  if (!meanType)
    return meanType.takeError();
  int64_t rank = shapeOf(x).size();
  if (axis < 0)
    axis += rank;
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  mlir::OpBuilder &b = ctx.builder();
  mlir::Location loc = ctx.loc();
  // The statistics have the stash type (float by default): a float16 input
  // is widened first.
  auto xType = x.getType().cast<mlir::RankedTensorType>();
  if (xType.getElementType() != meanType->getElementType()) {
    xType = mlir::RankedTensorType::get(xType.getShape(),
                                        meanType->getElementType());
    x = b.create<g::CastOp>(loc, xType, x);
  }
  auto meanOf = [&](mlir::Value v) {
    return b.create<g::ReduceMeanOp>(
        loc, *meanType, v, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  };
  mlir::Value mean = meanOf(x);
  ctx.setResult(1, mean);
  if (!hasOutput(ctx, 2))
    return llvm::Error::success();
  mlir::Value centred = b.create<g::SubOp>(loc, xType, x, mean);
  mlir::Value square = b.create<g::MulOp>(loc, xType, centred, centred);
  auto scalar = mlir::RankedTensorType::get({}, meanType->getElementType());
  mlir::Value eps = b.create<g::ConstantOp>(
      loc, scalar,
      mlir::DenseElementsAttr::get(
          scalar, b.getFloatAttr(meanType->getElementType(), epsilon)));
  mlir::Value variance =
      b.create<g::AddOp>(loc, *meanType, meanOf(square), eps);
  ctx.setResult(2, b.create<g::RsqrtOp>(loc, *meanType, variance));
  return llvm::Error::success();
}

static llvm::Error layerNorm(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  mlir::OpBuilder &b = ctx.builder();
  mlir::Value bias;
  if (ctx.hasInput(2)) {
    auto v = ctx.input(2);
    if (!v)
      return v.takeError();
    bias = *v;
  } else {
    auto t = in[1].getType().cast<mlir::RankedTensorType>();
    bias = b.create<g::ConstantOp>(
        ctx.loc(), t,
        mlir::DenseElementsAttr::get(t, b.getZeroAttr(t.getElementType())));
  }
  double epsilon = ctx.attrFloat("epsilon", 1e-5);
  int64_t axis = ctx.attrInt("axis", -1);
  ctx.setResult(0, b.create<g::LayerNormOp>(
                       ctx.loc(), in[0].getType(), in[0], in[1], bias,
                       b.getI64IntegerAttr(axis), b.getF64FloatAttr(epsilon)));
  return layerNormStatistics(ctx, in[0], axis, epsilon);
}

/// A class loss with class weights or reduction 'none', which the fused
/// cross_entropy / nll_loss ops do not carry, spelt with generic ops:
///   onehot[n, c, …] = (label[n, …] == c)   (compare with a constant iota)
///   loss[n, …]      = −Σ_c select(onehot, w[c] · logp[n, c, …], 0)
/// reduced by sum, or by mean as Σ loss / Σ_c select(onehot, w[c], 0) (the
/// weights of the counted labels; without weights their number). A label
/// equal to ignore_index matches no class: the iota holds C (never a valid
/// label) at that class.
static llvm::Expected<mlir::Value>
decomposedLoss(NodeContext &ctx, mlir::Value logp, mlir::Value labels,
               mlir::Value weight, llvm::StringRef reduction,
               std::optional<int64_t> ignore) {
  mlir::OpBuilder &b = ctx.builder();
  mlir::Location loc = ctx.loc();
  auto xType = logp.getType().cast<mlir::RankedTensorType>();
  auto labelType = labels.getType().cast<mlir::RankedTensorType>();
  mlir::Type f = xType.getElementType();
  int64_t rank = xType.getRank(), classes = xType.getDimSize(1);
  auto typeOf = [](llvm::ArrayRef<int64_t> shape, mlir::Type element) {
    return mlir::RankedTensorType::get(shape, element);
  };
  // Labels as N×1×…, the iota as 1×C×1….
  llvm::SmallVector<int64_t> labelShape(labelType.getShape());
  labelShape.insert(labelShape.begin() + 1, 1);
  mlir::Value column = b.create<g::ReshapeOp>(
      loc, typeOf(labelShape, labelType.getElementType()), labels);
  llvm::SmallVector<int64_t> classShape(rank, 1);
  classShape[1] = classes;
  auto iotaType = typeOf(classShape, labelType.getElementType());
  llvm::SmallVector<llvm::APInt> iota;
  unsigned width = labelType.getElementType().getIntOrFloatBitWidth();
  for (int64_t c = 0; c < classes; ++c)
    iota.push_back(llvm::APInt(width, ignore && *ignore == c ? classes : c,
                               /*isSigned=*/true));
  mlir::Value classIds = b.create<g::ConstantOp>(
      loc, iotaType, mlir::DenseElementsAttr::get(iotaType, iota));
  mlir::Value onehot =
      b.create<g::CompareOp>(loc, typeOf(xType.getShape(), b.getI1Type()),
                             column, classIds, b.getStringAttr("eq"));
  auto scalar = typeOf({}, f);
  mlir::Value zero = b.create<g::ConstantOp>(
      loc, scalar, mlir::DenseElementsAttr::get(scalar, b.getFloatAttr(f, 0)));
  mlir::Value classWeight;
  if (weight) {
    classWeight = b.create<g::ReshapeOp>(loc, typeOf(classShape, f), weight);
    logp = b.create<g::MulOp>(loc, xType, logp, classWeight);
  }
  mlir::Value picked = b.create<g::SelectOp>(loc, xType, onehot, logp, zero);
  auto sum = [&](mlir::Value v, llvm::ArrayRef<int64_t> axes,
                 llvm::ArrayRef<int64_t> shape) -> mlir::Value {
    return b.create<g::ReduceSumOp>(loc, typeOf(shape, f), v,
                                    b.getDenseI64ArrayAttr(axes),
                                    b.getBoolAttr(false));
  };
  llvm::SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  if (reduction == "none") {
    llvm::SmallVector<int64_t> shape(xType.getShape());
    shape.erase(shape.begin() + 1);
    mlir::Value perPosition = sum(picked, {1}, shape);
    return b.create<g::NegOp>(loc, perPosition.getType(), perPosition)
        .getResult();
  }
  mlir::Value total = sum(picked, all, {});
  total = b.create<g::NegOp>(loc, scalar, total);
  if (reduction == "sum")
    return total;
  mlir::Value counted =
      weight ? b.create<g::SelectOp>(loc, xType, onehot, classWeight, zero)
                   .getResult()
             : b.create<g::CastOp>(loc, xType, onehot).getResult();
  return b.create<g::DivOp>(loc, scalar, total, sum(counted, all, {}))
      .getResult();
}

/// SoftmaxCrossEntropyLoss (`FromLogits`) and NegativeLogLikelihoodLoss.
/// Without class weights and with a scalar reduction they are one
/// cross_entropy / nll_loss op; otherwise decomposedLoss. SCE's optional
/// second output (the log-probabilities) is a log_softmax.
template <typename OpTy, bool FromLogits>
static llvm::Error loss(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return ctx.unsupported("reduction '" + reduction + "'");
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  std::optional<int64_t> ignore;
  if (ctx.hasAttr("ignore_index"))
    ignore = ctx.attrInt("ignore_index", -100);
  mlir::Value logp;
  if (FromLogits && hasOutput(ctx, 1)) {
    logp = b.create<g::LogSoftmaxOp>(ctx.loc(), in[0].getType(), in[0],
                                     b.getI64IntegerAttr(1));
    ctx.setResult(1, logp);
  }
  if (!ctx.hasInput(2) && reduction != "none") {
    mlir::IntegerAttr ignoreAttr;
    if (ignore)
      ignoreAttr = b.getI64IntegerAttr(*ignore);
    ctx.setResult(0, b.create<OpTy>(ctx.loc(), *type, in[0], in[1],
                                    b.getStringAttr(reduction), ignoreAttr));
    return llvm::Error::success();
  }
  mlir::Value weight;
  if (ctx.hasInput(2)) {
    auto w = ctx.input(2);
    if (!w)
      return w.takeError();
    weight = *w;
  }
  if (!logp)
    logp = FromLogits ? b.create<g::LogSoftmaxOp>(ctx.loc(), in[0].getType(),
                                                  in[0], b.getI64IntegerAttr(1))
                            .getResult()
                      : in[0];
  auto result = decomposedLoss(ctx, logp, in[1], weight, reduction, ignore);
  if (!result)
    return result.takeError();
  ctx.setResult(0, *result);
  return llvm::Error::success();
}

static llvm::Error dropout(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  double ratio = ctx.attrFloat("ratio", 0.5);
  if (ctx.hasInput(1)) {
    const ConstTensor *r = ctx.constantInput(1);
    if (!r || r->values.size() != 1)
      return ctx.unsupported("a dropout ratio that is not a constant");
    // The ratio is stored as float32: round away its binary noise.
    ratio = std::round(r->values[0] * 1e7) / 1e7;
  }
  bool training = false;
  if (ctx.hasInput(2)) {
    const ConstTensor *t = ctx.constantInput(2);
    if (!t || t->values.size() != 1)
      return ctx.unsupported("a training_mode that is not a constant");
    training = t->values[0] != 0;
  }
  // Eval-mode dropout (and ratio 0) is the identity.
  if (!training || ratio == 0) {
    ctx.setResult(0, *in);
    return llvm::Error::success();
  }
  ctx.setResult(0, ctx.builder().create<g::DropoutOp>(
                       ctx.loc(), in->getType(), *in,
                       ctx.builder().getF64FloatAttr(ratio)));
  return llvm::Error::success();
}

/// The axes of a reduction (attribute before opset 13/18, input after),
/// non-negative, sorted and unique; empty means "all" unless
/// `noop_with_empty_axes` (then `noop` is set).
static llvm::Expected<std::vector<int64_t>>
reductionAxes(NodeContext &ctx, int64_t rank, bool &noop) {
  std::vector<int64_t> axes = ctx.attrInts("axes");
  if (!ctx.hasAttr("axes") && ctx.hasInput(1)) {
    auto c = ctx.constantInts(1, "reduction axes");
    if (!c)
      return c.takeError();
    axes = *c;
  }
  noop = false;
  if (axes.empty()) {
    noop = ctx.attrInt("noop_with_empty_axes", 0) != 0;
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  for (int64_t &a : axes) {
    if (a < -rank || a >= std::max<int64_t>(rank, 1))
      return ctx.unsupported("axis " + std::to_string(a) +
                             " is out of range for rank " +
                             std::to_string(rank));
    if (a < 0)
      a += rank;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  // A scalar has no axes to reduce.
  if (rank == 0)
    axes.clear();
  return axes;
}

/// ReduceSum, ReduceMean, ReduceMax; ReduceMin as −max(−x). The identity
/// when the axes are empty and noop_with_empty_axes is set.
template <typename OpTy, bool Negate = false>
static llvm::Error reduce(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  bool noop;
  auto axes = reductionAxes(ctx, shapeOf(*in).size(), noop);
  if (!axes)
    return axes.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  if (noop || (axes->empty() && in->getType() == *type)) {
    ctx.setResult(0, *in);
    return llvm::Error::success();
  }
  mlir::OpBuilder &b = ctx.builder();
  mlir::Value x = *in;
  if (Negate)
    x = b.create<g::NegOp>(ctx.loc(), x.getType(), x);
  mlir::Value r =
      b.create<OpTy>(ctx.loc(), *type, x, b.getDenseI64ArrayAttr(*axes),
                     b.getBoolAttr(ctx.attrInt("keepdims", 1)));
  if (Negate)
    r = b.create<g::NegOp>(ctx.loc(), *type, r);
  ctx.setResult(0, r);
  return llvm::Error::success();
}

static llvm::Error top2Gating(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  auto dispatch = ctx.resultType(0), combine = ctx.resultType(1);
  if (!dispatch)
    return dispatch.takeError();
  if (!combine)
    return combine.takeError();
  auto op = ctx.builder().create<g::Top2GatingOp>(ctx.loc(), *dispatch,
                                                  *combine, in[0], in[1]);
  ctx.setResult(0, op.getDispatch());
  ctx.setResult(1, op.getCombine());
  return llvm::Error::success();
}

void import::registerNNHandlers(HandlerTable &t) {
  registerPoolHandlers(t);
  registerCompositeHandlers(t);
  t["Conv"] = conv;
  t["BatchNormalization"] = batchNorm;
  t["Softmax"] = softmaxLike<g::SoftmaxOp>;
  t["LogSoftmax"] = softmaxLike<g::LogSoftmaxOp>;
  t["LayerNormalization"] = layerNorm;
  t["SoftmaxCrossEntropyLoss"] = loss<g::CrossEntropyOp, true>;
  t["NegativeLogLikelihoodLoss"] = loss<g::NllLossOp, false>;
  t["Dropout"] = dropout;
  t["ReduceMean"] = reduce<g::ReduceMeanOp>;
  t["ReduceSum"] = reduce<g::ReduceSumOp>;
  t["ReduceMax"] = reduce<g::ReduceMaxOp>;
  t["ReduceMin"] = reduce<g::ReduceMaxOp, /*Negate=*/true>;
  t["weft.Top2Gating"] = top2Gating;
}
