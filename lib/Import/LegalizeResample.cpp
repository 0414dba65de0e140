//===- LegalizeResample.cpp - ConvTranspose, Resize, Upsample -------------===//
//
// The ops of decoders and feature pyramids that enlarge spatial dims:
// ConvTranspose becomes graph.conv_transpose2d (1-d ones with a unit
// height, as Conv), Resize and the older Upsample become graph.resize.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// `v` (N×C×L, or a 1-d kernel C×O×K) with a unit dim before the last.
mlir::Value withUnitHeight(NodeContext &ctx, mlir::Value v) {
  auto t = v.getType().cast<mlir::RankedTensorType>();
  if (t.getRank() != 3)
    return v;
  llvm::SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + 2, 1);
  return ctx.builder().create<g::ReshapeOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, t.getElementType()), v);
}

/// Python's floor division, as ONNX's reference splits a padding.
int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/// The window of a transposed convolution along its spatial dims.
struct TransposedWindow {
  std::vector<int64_t> strides, dilations, padBegin, padEnd, outputPadding;
};

/// Strides, dilations, pads and output padding of a ConvTranspose node:
/// explicit pads, VALID, or pads derived (ONNX's rule) from `output_shape`
/// or SAME_UPPER/SAME_LOWER. A padding that ends up negative at the end is
/// output padding.
llvm::Expected<TransposedWindow> transposedWindow(NodeContext &ctx,
                                                  llvm::ArrayRef<int64_t> in,
                                                  llvm::ArrayRef<int64_t> k) {
  size_t spatial = k.size();
  auto orFill = [&](std::vector<int64_t> v, int64_t fill) {
    if (v.empty())
      v.assign(spatial, fill);
    return v;
  };
  TransposedWindow w;
  w.strides = orFill(ctx.attrInts("strides"), 1);
  w.dilations = orFill(ctx.attrInts("dilations"), 1);
  w.outputPadding = orFill(ctx.attrInts("output_padding"), 0);
  std::vector<int64_t> pads = ctx.attrInts("pads"),
                       outputShape = ctx.attrInts("output_shape");
  if (w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.outputPadding.size() != spatial)
    return ctx.unsupported("window attributes of another rank than the " +
                           std::to_string(spatial) + " spatial dims");
  // output_shape may list N and C too.
  if (outputShape.size() == spatial + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != spatial)
    return ctx.unsupported("an output_shape of " +
                           std::to_string(outputShape.size()) + " dims");
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return ctx.unsupported("auto_pad " + autoPad);
  bool derived = !outputShape.empty() || autoPad == "SAME_UPPER" ||
                 autoPad == "SAME_LOWER";
  if (derived) {
    for (size_t d = 0; d < spatial; ++d) {
      int64_t out = outputShape.empty() ? in[d] * w.strides[d] : outputShape[d];
      int64_t total = w.strides[d] * (in[d] - 1) + w.outputPadding[d] +
                      (k[d] - 1) * w.dilations[d] + 1 - out;
      int64_t half = floorDiv(total, 2);
      bool upper = autoPad == "SAME_UPPER";
      w.padBegin.push_back(upper ? half : total - half);
      w.padEnd.push_back(upper ? total - half : half);
    }
  } else if (autoPad == "VALID" || pads.empty()) {
    w.padBegin.assign(spatial, 0);
    w.padEnd.assign(spatial, 0);
  } else {
    if (pads.size() != 2 * spatial)
      return ctx.unsupported(std::to_string(pads.size()) + " pads for " +
                             std::to_string(spatial) + " spatial dims");
    w.padBegin.assign(pads.begin(), pads.begin() + spatial);
    w.padEnd.assign(pads.begin() + spatial, pads.end());
  }
  for (size_t d = 0; d < spatial; ++d) {
    if (w.padBegin[d] < 0)
      return ctx.unsupported("a negative leading padding (the output shape "
                             "extends the result before its first element)");
    if (w.padEnd[d] < 0) {
      w.outputPadding[d] -= w.padEnd[d];
      w.padEnd[d] = 0;
    }
    if (w.outputPadding[d] < 0)
      return ctx.unsupported("a negative output_padding");
  }
  return w;
}

llvm::Error convTranspose(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto weight = ctx.input(1);
  if (!weight)
    return weight.takeError();
  llvm::ArrayRef<int64_t> in = shapeOf(*x), w = shapeOf(*weight);
  if (in.size() != 3 && in.size() != 4)
    return ctx.unsupported(std::to_string(int64_t(in.size()) - 2) +
                           "-d transposed convolutions (1-d and 2-d are "
                           "supported)");
  if (w.size() != in.size())
    return ctx.unsupported("input and kernel of different ranks");
  llvm::ArrayRef<int64_t> kernel = w.drop_front(2);
  if (ctx.hasAttr("kernel_shape") &&
      ctx.attrInts("kernel_shape") != std::vector<int64_t>(kernel))
    return ctx.unsupported("a kernel_shape other than the weight's");
  auto window = transposedWindow(ctx, in.drop_front(2), kernel);
  if (!window)
    return window.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  auto bias = ctx.optionalInput(2);
  if (!bias)
    return bias.takeError();
  // 2-d attributes; a 1-d window gets a unit height.
  auto lifted = [&](std::vector<int64_t> v, int64_t fill) {
    if (v.size() == 1)
      v.insert(v.begin(), fill);
    return v;
  };
  std::vector<int64_t> begin = lifted(window->padBegin, 0),
                       end = lifted(window->padEnd, 0);
  std::vector<int64_t> pads{begin[0], begin[1], end[0], end[1]};
  auto resultType = *type;
  if (resultType.getRank() == 3) {
    llvm::SmallVector<int64_t> shape(resultType.getShape());
    shape.insert(shape.begin() + 2, 1);
    resultType = mlir::RankedTensorType::get(shape, type->getElementType());
  }
  // The window must give the shape ONNX's inference gave.
  std::vector<int64_t> strides = lifted(window->strides, 1),
                       dilations = lifted(window->dilations, 1),
                       outputPadding = lifted(window->outputPadding, 0);
  std::vector<int64_t> inExtents = lifted(in.drop_front(2).vec(), 1),
                       kernels = lifted(kernel.vec(), 1);
  for (int d = 0; d < 2; ++d) {
    int64_t extent = (inExtents[d] - 1) * strides[d] +
                     dilations[d] * (kernels[d] - 1) + 1 - begin[d] - end[d] +
                     outputPadding[d];
    if (extent != resultType.getDimSize(2 + d))
      return ctx.unsupported("a window giving extent " +
                             std::to_string(extent) + " where ONNX infers " +
                             std::to_string(resultType.getDimSize(2 + d)));
  }
  mlir::OpBuilder &b = ctx.builder();
  auto op = b.create<g::ConvTranspose2dOp>(
      ctx.loc(), resultType, withUnitHeight(ctx, *x),
      withUnitHeight(ctx, *weight), *bias, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(dilations),
      b.getDenseI64ArrayAttr(outputPadding),
      b.getI64IntegerAttr(ctx.attrInt("group", 1)));
  mlir::Value result = op.getResult();
  if (result.getType() != *type)
    result = b.create<g::ReshapeOp>(ctx.loc(), *type, result);
  ctx.setResult(0, result);
  return llvm::Error::success();
}

/// The dims an opset-18 Resize resamples (its `axes`, which the opset
/// bridge keeps as `__axes`), non-negative; empty for all dims.
llvm::Expected<std::vector<int64_t>> resizedAxes(NodeContext &ctx,
                                                 size_t rank) {
  std::vector<int64_t> axes = ctx.attrInts("__axes");
  if (axes.empty())
    axes = ctx.attrInts("axes");
  for (int64_t &a : axes) {
    if (a < -int64_t(rank) || a >= int64_t(rank))
      return ctx.unsupported("axis " + std::to_string(a) +
                             " out of range for rank " + std::to_string(rank));
    if (a < 0)
      a += rank;
  }
  return axes;
}

/// Run-time scales with one element per dim: those of `axes` taken from
/// `scales` (slices of it, concatenated with ones for the other dims), all
/// of `scales` without axes.
llvm::Expected<mlir::Value> scalesOverAllDims(NodeContext &ctx,
                                              mlir::Value scales, size_t rank) {
  auto axes = resizedAxes(ctx, rank);
  if (!axes)
    return axes.takeError();
  size_t count = axes->empty() ? rank : axes->size();
  if (shapeOf(scales) != llvm::ArrayRef<int64_t>{int64_t(count)})
    return ctx.unsupported("scales of another count than the rank or axes");
  if (axes->empty())
    return scales;
  mlir::OpBuilder &b = ctx.builder();
  mlir::Location loc = ctx.loc();
  mlir::Type f =
      scales.getType().cast<mlir::RankedTensorType>().getElementType();
  auto one = mlir::RankedTensorType::get({1}, f);
  llvm::SmallVector<mlir::Value> pieces;
  for (int64_t d = 0; d < int64_t(rank); ++d) {
    auto at = llvm::find(*axes, d);
    if (at == axes->end()) {
      pieces.push_back(b.create<g::ConstantOp>(
          loc, one, mlir::DenseElementsAttr::get(one, b.getFloatAttr(f, 1.0))));
      continue;
    }
    int64_t i = at - axes->begin();
    pieces.push_back(b.create<g::SliceOp>(
        loc, one, scales, b.getDenseI64ArrayAttr({i}),
        b.getDenseI64ArrayAttr({i + 1}), b.getDenseI64ArrayAttr({1})));
  }
  return b
      .create<g::ConcatOp>(loc, mlir::RankedTensorType::get({int64_t(rank)}, f),
                           pieces, b.getI64IntegerAttr(0))
      .getResult();
}

/// Resize (opsets 10 to 19; opset 10 is asymmetric with floor rounding)
/// and Upsample (`upsample`: inputs X and scales, asymmetric, floor).
llvm::Error resizeLike(NodeContext &ctx, bool upsample) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  llvm::ArrayRef<int64_t> in = shapeOf(*x), out = type->getShape();
  bool old = upsample || ctx.opset() < 11;
  std::string mode = ctx.attrString("mode", "nearest");
  std::string coordinates =
      old ? "asymmetric"
          : ctx.attrString("coordinate_transformation_mode", "half_pixel");
  std::string nearest =
      old ? "floor" : ctx.attrString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return ctx.unsupported("mode '" + mode + "'");
  if (coordinates == "tf_crop_and_resize")
    return ctx.unsupported("coordinate_transformation_mode "
                           "'tf_crop_and_resize' (a region of interest)");
  // The scales: a constant, an input computed at run time (the shapes are
  // then static, the values read when the op runs), or sizes.
  unsigned scalesInput = upsample || ctx.opset() < 11 ? 1 : 2;
  std::vector<double> scales;
  mlir::Value runtimeScales;
  bool hasScales = ctx.hasInput(scalesInput);
  if (const ConstTensor *c = ctx.constantInput(scalesInput)) {
    scales = c->values;
    hasScales = !scales.empty();
  } else if (upsample && ctx.hasAttr("scales")) {
    const onnx::AttributeProto *attr = nullptr;
    for (const auto &a : ctx.getNode().attribute())
      if (a.name() == "scales")
        attr = &a;
    scales.assign(attr->floats().begin(), attr->floats().end());
    hasScales = true;
  } else if (hasScales) {
    auto v = ctx.input(scalesInput);
    if (!v)
      return v.takeError();
    auto full = scalesOverAllDims(ctx, *v, in.size());
    if (!full)
      return full.takeError();
    runtimeScales = *full;
  }
  auto axes = resizedAxes(ctx, in.size());
  if (!axes)
    return axes.takeError();
  if (!runtimeScales && !scales.empty() && !axes->empty()) {
    if (scales.size() != axes->size())
      return ctx.unsupported("scales of another count than the axes");
    std::vector<double> full(in.size(), 1.0);
    for (auto [i, d] : llvm::enumerate(*axes))
      full[d] = scales[i];
    scales = full;
  }
  if ((hasScales && !runtimeScales && scales.size() != in.size()) ||
      out.size() != in.size())
    return ctx.unsupported("scales of another count than the rank");
  if (!hasScales || runtimeScales) {
    // Sizes (or run-time scales): the shapes give result / input.
    scales.clear();
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] == 0)
        return ctx.unsupported("resizing an empty dim");
      scales.push_back(double(out[d]) / double(in[d]));
    }
  }
  for (size_t d = 0; d < in.size(); ++d)
    if (!(scales[d] > 0) ||
        int64_t(std::floor(double(in[d]) * scales[d] + 1e-6)) != out[d])
      return ctx.unsupported("scale " + std::to_string(scales[d]) + " of dim " +
                             std::to_string(d) +
                             " does not give the inferred extent " +
                             std::to_string(out[d]));
  // The opset bridge keeps an opset-18 antialias as `__antialias`.
  bool antialias = ctx.attrInt("__antialias", ctx.attrInt("antialias", 0)) != 0;
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0, b.create<g::ResizeOp>(
                       ctx.loc(), *type, *x, runtimeScales,
                       b.getStringAttr(mode), b.getStringAttr(coordinates),
                       b.getDenseF64ArrayAttr(scales), b.getStringAttr(nearest),
                       b.getF64FloatAttr(ctx.attrFloat("cubic_coeff_a", -0.75)),
                       b.getBoolAttr(ctx.attrInt("exclude_outside", 0) != 0),
                       b.getBoolAttr(antialias)));
  return llvm::Error::success();
}

llvm::Error resize(NodeContext &ctx) { return resizeLike(ctx, false); }
llvm::Error upsample(NodeContext &ctx) { return resizeLike(ctx, true); }

} // namespace

void import::registerResampleHandlers(HandlerTable &t) {
  t["ConvTranspose"] = convTranspose;
  t["Resize"] = resize;
  t["Upsample"] = upsample;
}
