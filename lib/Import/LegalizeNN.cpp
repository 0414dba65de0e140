//===- LegalizeNN.cpp - Convolution, pooling, normalisation, losses -------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"
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

/// Pads as [top, left, bottom, right] from ONNX's [begin..., end...].
static llvm::Expected<std::vector<int64_t>> pads2d(NodeContext &ctx) {
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return ctx.unsupported("auto_pad " + autoPad + " (export explicit pads)");
  std::vector<int64_t> pads = ctx.attrInts("pads");
  if (pads.empty())
    pads.assign(4, 0);
  if (pads.size() != 4)
    return ctx.unsupported("only 2-d windows are supported");
  return pads;
}

static std::vector<int64_t> orOnes(std::vector<int64_t> v) {
  if (v.empty())
    v.assign(2, 1);
  return v;
}

static llvm::Error conv(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  if (shapeOf(in[0]).size() != 4)
    return ctx.unsupported("only 2-d convolutions (4-d inputs) are supported");
  auto pads = pads2d(ctx);
  if (!pads)
    return pads.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::Value bias;
  if (ctx.hasInput(2)) {
    auto b = ctx.input(2);
    if (!b)
      return b.takeError();
    bias = *b;
  }
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0,
                b.create<g::Conv2dOp>(
                    ctx.loc(), *type, in[0], in[1], bias,
                    b.getDenseI64ArrayAttr(orOnes(ctx.attrInts("strides"))),
                    b.getDenseI64ArrayAttr(*pads),
                    b.getDenseI64ArrayAttr(orOnes(ctx.attrInts("dilations"))),
                    b.getI64IntegerAttr(ctx.attrInt("group", 1))));
  return llvm::Error::success();
}

template <typename OpTy> static llvm::Error pool(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  if (ctx.attrInt("ceil_mode", 0))
    return ctx.unsupported("ceil_mode=1");
  std::vector<int64_t> dil = ctx.attrInts("dilations");
  if (llvm::any_of(dil, [](int64_t d) { return d != 1; }))
    return ctx.unsupported("dilated pooling");
  auto pads = pads2d(ctx);
  if (!pads)
    return pads.takeError();
  if (std::is_same<OpTy, g::AvgPoolOp>::value &&
      !ctx.attrInt("count_include_pad", 0) &&
      llvm::any_of(*pads, [](int64_t p) { return p != 0; }))
    return ctx.unsupported("padded average pooling with count_include_pad=0");
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(
      0, b.create<OpTy>(ctx.loc(), *type, *in,
                        b.getDenseI64ArrayAttr(ctx.attrInts("kernel_shape")),
                        b.getDenseI64ArrayAttr(orOnes(ctx.attrInts("strides"))),
                        b.getDenseI64ArrayAttr(*pads)));
  return llvm::Error::success();
}

static llvm::Error globalAvgPool(NodeContext &ctx) {
  return emitFromInput<g::GlobalAvgPoolOp>(ctx);
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
  ctx.setResult(0, b.create<g::LayerNormOp>(
                       ctx.loc(), in[0].getType(), in[0], in[1], bias,
                       b.getI64IntegerAttr(ctx.attrInt("axis", -1)),
                       b.getF64FloatAttr(ctx.attrFloat("epsilon", 1e-5))));
  return llvm::Error::success();
}

template <typename OpTy> static llvm::Error loss(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = inputs(ctx, 2, in))
    return err;
  if (ctx.hasInput(2))
    return ctx.unsupported("class weights");
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum")
    return ctx.unsupported("reduction '" + reduction +
                           "' (the loss must be a scalar)");
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  mlir::IntegerAttr ignore;
  if (ctx.hasAttr("ignore_index"))
    ignore = b.getI64IntegerAttr(ctx.attrInt("ignore_index", -100));
  ctx.setResult(0, b.create<OpTy>(ctx.loc(), *type, in[0], in[1],
                                  b.getStringAttr(reduction), ignore));
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

template <typename OpTy> static llvm::Error reduce(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  int64_t rank = shapeOf(*in).size();
  std::vector<int64_t> axes = ctx.attrInts("axes");
  if (axes.empty() && ctx.hasInput(1)) {
    auto c = ctx.constantInts(1, "reduction axes");
    if (!c)
      return c.takeError();
    axes = *c;
  }
  if (axes.empty()) {
    if (ctx.attrInt("noop_with_empty_axes", 0)) {
      ctx.setResult(0, *in);
      return llvm::Error::success();
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  for (int64_t &a : axes)
    if (a < 0)
      a += rank;
  llvm::sort(axes);
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0, b.create<OpTy>(ctx.loc(), *type, *in,
                                  b.getDenseI64ArrayAttr(axes),
                                  b.getBoolAttr(ctx.attrInt("keepdims", 1))));
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
  t["Conv"] = conv;
  t["MaxPool"] = pool<g::MaxPoolOp>;
  t["AveragePool"] = pool<g::AvgPoolOp>;
  t["GlobalAveragePool"] = globalAvgPool;
  t["BatchNormalization"] = batchNorm;
  t["Softmax"] = softmaxLike<g::SoftmaxOp>;
  t["LogSoftmax"] = softmaxLike<g::LogSoftmaxOp>;
  t["LayerNormalization"] = layerNorm;
  t["SoftmaxCrossEntropyLoss"] = loss<g::CrossEntropyOp>;
  t["NegativeLogLikelihoodLoss"] = loss<g::NllLossOp>;
  t["Dropout"] = dropout;
  t["ReduceMean"] = reduce<g::ReduceMeanOp>;
  t["ReduceSum"] = reduce<g::ReduceSumOp>;
  t["ReduceMax"] = reduce<g::ReduceMaxOp>;
  t["weft.Top2Gating"] = top2Gating;
}
