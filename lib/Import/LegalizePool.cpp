//===- LegalizePool.cpp - MaxPool, AveragePool, LpPool, global pools
//-------===//
//
// Pools of 1 to 3 spatial dims become graph.max_pool and graph.avg_pool
// (a 1-d window lifted to 2-d); ceil_mode becomes padding at the end that
// the maximum skips and the average does not count. LpPool is the p-th
// root of the window sums of |x|^p, an average pool times the kernel's
// size; the global pools are reductions over the spatial dims
// (docs/Import.md).
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "Window.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// `window`'s pads with the ceil_mode padding added at the ends.
std::vector<int64_t> withExtra(const Window &w) {
  std::vector<int64_t> pads = w.pads;
  size_t spatial = w.extra.size();
  for (size_t d = 0; d < spatial; ++d)
    pads[spatial + d] += w.extra[d];
  return pads;
}

/// `x` (N×C×spatial) with `pads` zeros before and after each spatial dim,
/// as a concat with splat constants.
mlir::Value zeroPadded(Composer &c, mlir::Value x,
                       llvm::ArrayRef<int64_t> pads) {
  NodeContext &ctx = c.context();
  size_t spatial = pads.size() / 2;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t axis = 2 + d, before = pads[d], after = pads[spatial + d];
    if (!before && !after)
      continue;
    llvm::SmallVector<int64_t> shape(shapeOf(x));
    llvm::SmallVector<mlir::Value> parts;
    auto zeros = [&](int64_t n) {
      llvm::SmallVector<int64_t> s = shape;
      s[axis] = n;
      parts.push_back(c.constant(s, elementOf(x), {0.0}));
    };
    if (before)
      zeros(before);
    parts.push_back(x);
    if (after)
      zeros(after);
    shape[axis] += before + after;
    x = ctx.builder().create<g::ConcatOp>(
        ctx.loc(), mlir::RankedTensorType::get(shape, elementOf(x)), parts,
        ctx.builder().getI64IntegerAttr(axis));
  }
  return x;
}

mlir::DenseI64ArrayAttr dilationsAttr(mlir::OpBuilder &b, const Window &w) {
  if (llvm::all_of(w.dilations, [](int64_t d) { return d == 1; }))
    return {};
  return b.getDenseI64ArrayAttr(w.dilations);
}

/// The average of each window of `x` (graph form), padding counted when
/// `countPad` (ONNX's count_include_pad = 1), the ceil_mode padding never:
/// with both, the counted padding becomes zeros of the input.
mlir::Value averageOf(Composer &c, mlir::Value x, const Window &w,
                      bool countPad, mlir::RankedTensorType type) {
  std::vector<int64_t> pads = withExtra(w);
  bool exclude = !countPad && (w.hasPadding() || w.hasExtra());
  if (countPad && w.hasExtra()) {
    x = zeroPadded(c, x, w.pads);
    size_t spatial = w.extra.size();
    std::fill(pads.begin(), pads.begin() + spatial, 0);
    std::copy(w.extra.begin(), w.extra.end(), pads.begin() + spatial);
    exclude = true;
  }
  NodeContext &ctx = c.context();
  mlir::OpBuilder &b = ctx.builder();
  auto op = b.create<g::AvgPoolOp>(
      ctx.loc(), type, x, b.getDenseI64ArrayAttr(w.kernel),
      b.getDenseI64ArrayAttr(w.strides), b.getDenseI64ArrayAttr(pads),
      dilationsAttr(b, w));
  if (exclude)
    op.setExcludePad(true);
  return op.getResult();
}

/// The input and window of a MaxPool, AveragePool or LpPool node.
struct PoolNode {
  mlir::Value x;
  Window window;
  mlir::RankedTensorType type, liftedType;
};

llvm::Expected<PoolNode> poolNode(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  if (ctx.getNode().output_size() > 1 && !ctx.getNode().output(1).empty())
    return ctx.unsupported("the Indices output of MaxPool");
  if (ctx.attrInt("storage_order", 0))
    return ctx.unsupported("storage_order=1");
  auto window = windowOf(ctx, *in, {}, /*maxSpatial=*/3);
  if (!window)
    return window.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  return PoolNode{withUnitHeight(ctx, *in), std::move(*window), *type,
                  liftedType(*type)};
}

llvm::Error maxPool(NodeContext &ctx) {
  auto node = poolNode(ctx);
  if (!node)
    return node.takeError();
  mlir::OpBuilder &b = ctx.builder();
  const Window &w = node->window;
  mlir::Value y = b.create<g::MaxPoolOp>(
      ctx.loc(), node->liftedType, node->x, b.getDenseI64ArrayAttr(w.kernel),
      b.getDenseI64ArrayAttr(w.strides), b.getDenseI64ArrayAttr(withExtra(w)),
      dilationsAttr(b, w));
  setWindowResult(ctx, y, node->type);
  return llvm::Error::success();
}

llvm::Error avgPool(NodeContext &ctx) {
  auto node = poolNode(ctx);
  if (!node)
    return node.takeError();
  Composer c(ctx);
  bool countPad = ctx.attrInt("count_include_pad", 0) != 0;
  setWindowResult(
      ctx, averageOf(c, node->x, node->window, countPad, node->liftedType),
      node->type);
  return llvm::Error::success();
}

/// LpPool: (Σ |x|^p)^(1/p) over each window, the sum an average pool that
/// counts the padding (zeros), times the kernel's size. With ceil_mode the
/// windows past the padded input average fewer elements and are still
/// scaled by the kernel's size, as ONNX's reference and PyTorch's lp_pool
/// do. p = 1 and 2 take |x| and x · x, others pow(|x|, p).
llvm::Error lpPool(NodeContext &ctx) {
  auto node = poolNode(ctx);
  if (!node)
    return node.takeError();
  int64_t p = ctx.attrInt("p", 2);
  if (p <= 0)
    return ctx.unsupported("p = " + std::to_string(p) +
                           " (p must be positive)");
  Composer c(ctx);
  mlir::Value x = node->x;
  auto abs = [&](mlir::Value v) {
    return c.add(c.unary<g::ReluOp>(v),
                 c.unary<g::ReluOp>(c.unary<g::NegOp>(v)));
  };
  mlir::Value powered = p == 2 ? c.mul(x, x)
                        : p == 1
                            ? abs(x)
                            : c.binary<g::PowOp>(abs(x), c.scalarLike(x, p));
  mlir::Value avg =
      averageOf(c, powered, node->window, /*countPad=*/true, node->liftedType);
  int64_t size = 1;
  for (int64_t k : node->window.kernel)
    size *= k;
  mlir::Value sum = c.mul(avg, c.scalarLike(avg, double(size)));
  mlir::Value y = p == 1 ? sum
                  : p == 2
                      ? c.unary<g::SqrtOp>(sum)
                      : c.binary<g::PowOp>(sum, c.scalarLike(sum, 1.0 / p));
  setWindowResult(ctx, y, node->type);
  return llvm::Error::success();
}

/// GlobalMaxPool: reduce_max over every spatial dim, kept as size 1.
llvm::Error globalMaxPool(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  int64_t rank = shapeOf(*x).size();
  if (rank < 3)
    return ctx.unsupported("an input of rank " + std::to_string(rank) +
                           " (N x C x spatial dims expected)");
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  Composer c(ctx);
  return c.finish(c.reduce<g::ReduceMaxOp>(*x, axes, /*keepdims=*/true));
}

llvm::Error globalAvgPool(NodeContext &ctx) {
  return emitFromInput<g::GlobalAvgPoolOp>(ctx);
}

} // namespace

void import::registerPoolHandlers(HandlerTable &t) {
  t["MaxPool"] = maxPool;
  t["AveragePool"] = avgPool;
  t["LpPool"] = lpPool;
  t["GlobalMaxPool"] = globalMaxPool;
  t["GlobalAveragePool"] = globalAvgPool;
}
