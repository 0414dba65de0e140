//===- GraphOpsResample.cpp - Verifiers of conv_transpose2d and resize ----===//
//
// The ops that enlarge (or resample) spatial dims: the transposed
// convolution of decoders and GANs, and ONNX Resize's interpolations.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace weft::graph;

static ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, "x");
  os << "]";
  return os.str();
}

static bool allPositive(ArrayRef<int64_t> v) {
  return llvm::all_of(v, [](int64_t x) { return x > 0; });
}

static bool allNonNegative(ArrayRef<int64_t> v) {
  return llvm::all_of(v, [](int64_t x) { return x >= 0; });
}

/// The extent of a transposed convolution's result along one spatial dim.
static int64_t transposedExtent(int64_t in, int64_t kernel, int64_t stride,
                                int64_t padBefore, int64_t padAfter,
                                int64_t dilation, int64_t outputPadding) {
  return (in - 1) * stride + dilation * (kernel - 1) + 1 - padBefore -
         padAfter + outputPadding;
}

LogicalResult ConvTranspose2dOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    res = shapeOf(getResult());
  if (in.size() != 4 || w.size() != 4)
    return emitOpError("expected 4-d input (NCHW) and weight (C x O/group x "
                       "KH x KW)");
  ArrayRef<int64_t> s = getStrides(), p = getPads(), d = getDilations(),
                    op = getOutputPadding();
  if (s.size() != 2 || p.size() != 4 || d.size() != 2 || op.size() != 2)
    return emitOpError("expected 2 strides, 4 pads, 2 dilations and 2 "
                       "output paddings");
  if (!allPositive(s) || !allPositive(d))
    return emitOpError("expected positive strides and dilations");
  if (!allNonNegative(p) || !allNonNegative(op))
    return emitOpError("expected non-negative pads and output paddings");
  int64_t group = getGroup();
  if (group <= 0 || in[1] % group)
    return emitOpError() << "group " << group
                         << " does not divide the input channels " << in[1];
  if (w[0] != in[1])
    return emitOpError() << "weight expects " << w[0]
                         << " input channels, input has " << in[1];
  // A device's empty shard of input channels gives no output channels.
  int64_t out = in[1] == 0 && res.size() == 4 && res[1] == 0 ? 0 : w[1] * group;
  if (getBias() && shapeOf(getBias()) != ArrayRef<int64_t>{out})
    return emitOpError() << "expected bias of " << out << " elements";
  SmallVector<int64_t> expected{
      in[0], out, transposedExtent(in[2], w[2], s[0], p[0], p[2], d[0], op[0]),
      transposedExtent(in[3], w[3], s[1], p[1], p[3], d[1], op[1])};
  if (expected[2] <= 0 || expected[3] <= 0 || expected != res)
    return emitOpError() << "expected result shape " << shapeString(expected)
                         << ", found " << shapeString(res);
  return success();
}

static std::string formatScale(double scale) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", scale);
  return text;
}

LogicalResult ResizeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), res = shapeOf(getResult());
  ArrayRef<double> scales = getScales();
  if (in.size() != res.size())
    return emitOpError() << "expected a result of rank " << in.size();
  if (scales.size() != in.size())
    return emitOpError() << "expected " << in.size() << " scales, found "
                         << scales.size();
  static constexpr StringLiteral modes[] = {"nearest", "linear", "cubic"};
  static constexpr StringLiteral coordinates[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
      "align_corners", "asymmetric"};
  static constexpr StringLiteral nearest[] = {
      "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(modes, getMode()))
    return emitOpError() << "unknown mode '" << getMode()
                         << "' (expected nearest, linear or cubic)";
  if (!llvm::is_contained(coordinates, getCoordinateTransformationMode()))
    return emitOpError() << "unknown coordinate_transformation_mode '"
                         << getCoordinateTransformationMode() << "'";
  if (!llvm::is_contained(nearest, getNearestMode()))
    return emitOpError() << "unknown nearest_mode '" << getNearestMode() << "'";
  if (getRuntimeScales() &&
      shapeOf(getRuntimeScales()) != ArrayRef<int64_t>{int64_t(in.size())})
    return emitOpError() << "expected " << in.size() << " run-time scales";
  if (getAntialias() && getMode() == "nearest")
    return emitOpError("antialias needs mode linear or cubic");
  for (auto [d, scale] : llvm::enumerate(scales)) {
    if (!(scale > 0) || !std::isfinite(scale))
      return emitOpError() << "scale " << formatScale(scale) << " of dim " << d
                           << " is not positive";
    // ⌊extent · scale⌋, allowing for the rounding of scales given as
    // sizes / extents.
    double want = double(in[d]) * scale;
    int64_t extent = int64_t(std::floor(want + 1e-6 * std::max(1.0, want)));
    if (res[d] != extent)
      return emitOpError() << "dim " << d << " of extent " << in[d]
                           << " and scale " << formatScale(scale) << " gives "
                           << extent << ", found " << res[d];
  }
  return success();
}
