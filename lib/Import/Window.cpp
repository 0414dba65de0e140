//===- Window.cpp - Window attributes of convolutions and pools -----------===//

#include "Window.h"
#include "Graph/IR/GraphOps.h"
#include "WindowShape.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

static bool anyNonZero(const std::vector<int64_t> &v) {
  return llvm::any_of(v, [](int64_t x) { return x != 0; });
}

bool Window::hasPadding() const { return anyNonZero(pads); }
bool Window::hasExtra() const { return anyNonZero(extra); }

/// A 1-d entry list with the unit height's entry in front.
static std::vector<int64_t> lifted(std::vector<int64_t> v, int64_t fill) {
  v.insert(v.begin(), fill);
  return v;
}

llvm::Expected<Window> import::windowOf(NodeContext &ctx, mlir::Value input,
                                        std::vector<int64_t> kernel,
                                        int64_t maxSpatial) {
  llvm::ArrayRef<int64_t> shape = shapeOf(input);
  int64_t spatial = int64_t(shape.size()) - 2;
  if (spatial < 1 || spatial > maxSpatial)
    return ctx.unsupported(std::to_string(spatial) + "-d windows (1-d " +
                           (maxSpatial == 2 ? "and" : "to") + " " +
                           std::to_string(maxSpatial) + "-d are supported)");
  WindowAttrs w;
  w.kernel = ctx.hasAttr("kernel_shape") ? ctx.attrInts("kernel_shape")
                                         : std::move(kernel);
  w.strides = ctx.attrInts("strides");
  w.dilations = ctx.attrInts("dilations");
  w.pads = ctx.attrInts("pads");
  w.autoPad = ctx.attrString("auto_pad", "NOTSET");
  w.ceilMode = ctx.attrInt("ceil_mode", 0) != 0;
  std::vector<int64_t> out;
  llvm::ArrayRef<int64_t> in = shape.drop_front(2);
  std::string why = resolveWindow(in, w, out);
  if (!why.empty())
    return ctx.unsupported(why);
  Window result;
  result.kernel = w.kernel;
  result.strides = w.strides;
  result.dilations = w.dilations;
  result.pads = w.pads;
  for (int64_t d = 0; d < spatial; ++d)
    result.extra.push_back(extraEndPad(in, w, out, d));
  if (spatial == 1) {
    result.kernel = lifted(result.kernel, 1);
    result.strides = lifted(result.strides, 1);
    result.dilations = lifted(result.dilations, 1);
    result.pads = {0, w.pads[0], 0, w.pads[1]};
    result.extra = lifted(result.extra, 0);
  }
  return result;
}

mlir::Value import::withUnitHeight(NodeContext &ctx, mlir::Value v) {
  auto t = v.getType().cast<mlir::RankedTensorType>();
  if (t.getRank() != 3)
    return v;
  llvm::SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + 2, 1);
  return ctx.builder().create<g::ReshapeOp>(
      ctx.loc(), mlir::RankedTensorType::get(shape, t.getElementType()), v);
}

mlir::RankedTensorType import::liftedType(mlir::RankedTensorType type) {
  if (type.getRank() != 3)
    return type;
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + 2, 1);
  return mlir::RankedTensorType::get(shape, type.getElementType());
}

void import::setWindowResult(NodeContext &ctx, mlir::Value v,
                             mlir::RankedTensorType type) {
  if (v.getType() != type)
    v = ctx.builder().create<g::ReshapeOp>(ctx.loc(), type, v);
  ctx.setResult(0, v);
}
