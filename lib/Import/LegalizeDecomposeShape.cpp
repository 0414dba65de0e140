//===- LegalizeDecomposeShape.cpp - Masks, repeats and indices ------------===//
//
// Trilu, Tile, CumSum, OneHot, Size, ArgMax and ArgMin as compositions of
// graph ops with constant masks, ranges and matrices (docs/Import.md,
// "Decompositions"). Each needs its shape-like operands (k, repeats, axis,
// depth, values) to be constants, as the folder leaves them.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// Trilu(x, k): x where the constant [rows, cols] mask holds (upper: col -
/// row >= k; lower: col - row <= k), else 0. The gradient flows where the
/// mask holds.
llvm::Error trilu(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  llvm::ArrayRef<int64_t> shape = shapeOf(*x);
  if (shape.size() < 2)
    return ctx.unsupported("an input of rank below 2");
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto ks = ctx.constantInts(1, "the diagonal offset k");
    if (!ks)
      return ks.takeError();
    if (ks->size() != 1)
      return ctx.unsupported("a k of more than one value");
    k = (*ks)[0];
  }
  bool upper = ctx.attrInt("upper", 1) != 0;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  llvm::SmallVector<bool> keep(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep[i * cols + j] = upper ? j - i >= k : j - i <= k;
  Composer c(ctx);
  if (llvm::all_of(keep, [](bool b) { return b; }))
    return c.finish(*x);
  return c.finish(
      c.select(c.mask({rows, cols}, keep), *x, c.scalarLike(*x, 0)));
}

/// Tile(x, repeats): x [d0, d1, ...] viewed as [1, d0, 1, d1, ...] (a unit
/// dim before each repeated axis), expanded to [r0, d0, r1, d1, ...] and
/// viewed as [r0·d0, r1·d1, ...]: element i of axis k is x[i mod dk].
llvm::Error tile(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto repeats = ctx.constantInts(1, "Tile's repeats");
  if (!repeats)
    return repeats.takeError();
  llvm::ArrayRef<int64_t> shape = shapeOf(*x);
  if (repeats->size() != shape.size())
    return badInput("ONNX Tile node '{0}' has {1} repeats for an input of "
                    "rank {2}",
                    ctx.getNode().name(), repeats->size(), shape.size());
  llvm::SmallVector<int64_t> unit, expanded, tiled;
  for (auto [d, r] : llvm::zip(shape, *repeats)) {
    if (r < 0)
      return ctx.unsupported("negative repeats");
    if (r != 1) {
      unit.push_back(1);
      expanded.push_back(r);
    }
    unit.push_back(d);
    expanded.push_back(d);
    tiled.push_back(d * r);
  }
  Composer c(ctx);
  return c.finish(c.reshape(c.expand(c.reshape(*x, unit), expanded), tiled));
}

/// The longest float axis CumSum multiplies by a matrix (n² elements, 256
/// KB of f32 at this n); longer axes and integers take the scan.
constexpr int64_t kCumSumMatrixExtent = 256;

/// Along `axis`, x shifted by `s` positions towards the end (or the start,
/// `back`) with zeros coming in: a slice and a concat with a splat zero.
mlir::Value shifted(Composer &c, mlir::Value x, int64_t axis, int64_t s,
                    bool back) {
  llvm::SmallVector<int64_t> shape(shapeOf(x)), lo(shape.size(), 0), hi(shape),
      step(shape.size(), 1), piece(shape);
  int64_t n = shape[axis];
  if (s >= n)
    return c.constant(shape, elementOf(x), {0.0});
  lo[axis] = back ? s : 0;
  hi[axis] = back ? n : n - s;
  piece[axis] = n - s;
  shape[axis] = s;
  mlir::OpBuilder &b = c.context().builder();
  mlir::Location loc = c.context().loc();
  mlir::Value kept = b.create<g::SliceOp>(
      loc, mlir::RankedTensorType::get(piece, elementOf(x)), x,
      b.getDenseI64ArrayAttr(lo), b.getDenseI64ArrayAttr(hi),
      b.getDenseI64ArrayAttr(step));
  mlir::Value zeros = c.constant(shape, elementOf(x), {0.0});
  llvm::SmallVector<mlir::Value> parts{zeros, kept};
  if (back)
    std::swap(parts[0], parts[1]);
  return b.create<g::ConcatOp>(loc, x.getType(), parts,
                               b.getI64IntegerAttr(axis));
}

/// CumSum by a scan of ceil(log2 n) steps, y += y shifted by 1, 2, 4, ...
/// (towards the end; towards the start with `reverse`); `exclusive` shifts
/// x by one first. Slices, concats and adds: exact for integers, no
/// n × n constant.
mlir::Value cumSumScan(Composer &c, mlir::Value x, int64_t axis, bool exclusive,
                       bool reverse) {
  int64_t n = shapeOf(x)[axis];
  mlir::Value y = exclusive ? shifted(c, x, axis, 1, reverse) : x;
  for (int64_t s = 1; s < n; s *= 2)
    y = c.add(y, shifted(c, y, axis, s, reverse));
  return y;
}

/// CumSum by a product with a constant 0/1 matrix T along the axis,
/// T[j][i] = 1 when input position j adds to output position i (j <= i;
/// exclusive j < i; reverse j >= i, exclusive j > i). The axis is moved last
/// by a transpose unless it is the last (x · T) or the one before (Tᵀ · x).
mlir::Value cumSumMatrix(Composer &c, mlir::Value x, int64_t axis,
                         bool exclusive, bool reverse) {
  llvm::ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size(), n = shape[axis];
  auto adds = [&](int64_t j, int64_t i) {
    return reverse ? (exclusive ? j > i : j >= i)
                   : (exclusive ? j < i : j <= i);
  };
  bool left = rank >= 2 && axis == rank - 2;
  std::vector<double> matrix(n * n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t s = 0; s < n; ++s)
      matrix[r * n + s] = (left ? adds(s, r) : adds(r, s)) ? 1.0 : 0.0;
  mlir::Value t = c.constant({n, n}, elementOf(x), matrix);
  if (rank == 1)
    return c.reshape(c.matmul(c.reshape(x, {1, n}), t), {n});
  if (left)
    return c.matmul(t, x);
  llvm::SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return c.transpose(c.matmul(c.transpose(x, perm), t), inverse);
}

/// CumSum(x, axis): float axes of up to kCumSumMatrixExtent elements are
/// one matmul with a constant matrix (one op for the search, GEMM work
/// n² per line); longer ones and integer inputs (position ids from a mask)
/// are a scan of 3·ceil(log2 n) ops.
llvm::Error cumSum(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto axes = ctx.constantInts(1, "CumSum's axis");
  if (!axes)
    return axes.takeError();
  if (axes->size() != 1)
    return ctx.unsupported("an axis of more than one value");
  llvm::ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = shape.size();
  if (rank == 0)
    return ctx.unsupported("a scalar input");
  auto axis = normalizeAxis(ctx, (*axes)[0], rank, "axis");
  if (!axis)
    return axis.takeError();
  bool exclusive = ctx.attrInt("exclusive", 0) != 0;
  bool reverse = ctx.attrInt("reverse", 0) != 0;
  Composer c(ctx);
  if (shape[*axis] == 0)
    return c.finish(*x);
  bool matrix = elementOf(*x).isa<mlir::FloatType>() &&
                shape[*axis] <= kCumSumMatrixExtent;
  return c.finish(matrix ? cumSumMatrix(c, *x, *axis, exclusive, reverse)
                         : cumSumScan(c, *x, *axis, exclusive, reverse));
}

/// One of OneHot's two values (0: off, 1: on) as a scalar: a constant, or
/// a slice of the values tensor when that is not one (an initializer of
/// two floats is a parameter, which then gets a gradient).
mlir::Value oneHotValue(Composer &c, const ConstTensor *constant,
                        mlir::Value values, int64_t which) {
  if (constant) {
    mlir::Type element = convertElementType(c.context().builder().getContext(),
                                            constant->elementType);
    return c.scalar(element, constant->values[which]);
  }
  mlir::OpBuilder &b = c.context().builder();
  auto type = mlir::RankedTensorType::get({1}, elementOf(values));
  mlir::Value piece = b.create<g::SliceOp>(
      c.context().loc(), type, values, b.getDenseI64ArrayAttr({which}),
      b.getDenseI64ArrayAttr({which + 1}), b.getDenseI64ArrayAttr({1}));
  return c.reshape(piece, {});
}

/// OneHot(indices, depth, values): `on` where the index (negative ones
/// counted from depth) equals its position along `axis`, else `off`; a
/// compare with a constant range [0, depth) and a select. Indices outside
/// [-depth, depth) give a row of `off`, as ONNX says.
llvm::Error oneHot(NodeContext &ctx) {
  auto indices = ctx.input(0), values = ctx.input(2);
  if (!indices)
    return indices.takeError();
  if (!values)
    return values.takeError();
  if (elementOf(*indices).isa<mlir::FloatType>())
    return ctx.unsupported("floating-point indices");
  auto depths = ctx.constantInts(1, "OneHot's depth");
  if (!depths)
    return depths.takeError();
  if (depths->size() != 1 || (*depths)[0] <= 0 ||
      shapeOf(*values) != llvm::ArrayRef<int64_t>(2))
    return badInput("ONNX OneHot node '{0}' needs one positive depth and two "
                    "values (off, on)",
                    ctx.getNode().name());
  int64_t depth = (*depths)[0];
  llvm::SmallVector<int64_t> shape(shapeOf(*indices));
  auto axis =
      normalizeAxis(ctx, ctx.attrInt("axis", -1), shape.size() + 1, "axis");
  if (!axis)
    return axis.takeError();

  Composer c(ctx);
  shape.insert(shape.begin() + *axis, 1);
  mlir::Value idx = c.reshape(*indices, shape);
  mlir::Value wrapped = c.add(idx, c.scalarLike(idx, depth));
  idx = c.select(c.compare("lt", idx, c.scalarLike(idx, 0)), wrapped, idx);
  llvm::SmallVector<int64_t> rangeShape(shape.size(), 1);
  rangeShape[*axis] = depth;
  std::vector<double> range(depth);
  for (int64_t i = 0; i < depth; ++i)
    range[i] = double(i);
  mlir::Value hit =
      c.compare("eq", idx, c.constant(rangeShape, elementOf(idx), range));
  const ConstTensor *constant = ctx.constantInput(2);
  return c.finish(c.select(hit, oneHotValue(c, constant, *values, 1),
                           oneHotValue(c, constant, *values, 0)));
}

/// Size: the element count of a statically shaped tensor, a constant the
/// importer can fold further.
llvm::Error size(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  ConstTensor count;
  count.elementType = onnx::TensorProto::INT64;
  count.values.push_back(
      double(x->getType().cast<mlir::RankedTensorType>().getNumElements()));
  ctx.setConstantResult(0, std::move(count));
  return llvm::Error::success();
}

/// ArgMax / ArgMin (of -x) along `axis`: the maximum m (reduce_max, kept
/// dims), the positions where x = m, and the first of them (or the last,
/// select_last_index=1) as a reduce_max over a constant ramp: n-1-i at hits
/// (the first hit has the largest), else -1; the index is n-1 minus it. The
/// result is an integer tensor, so no gradient flows.
template <bool Min> llvm::Error argExtreme(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  if (rank == 0)
    return ctx.unsupported("a scalar input");
  auto axis = normalizeAxis(ctx, ctx.attrInt("axis", 0), rank, "axis");
  if (!axis)
    return axis.takeError();
  bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  bool last = ctx.attrInt("select_last_index", 0) != 0;
  int64_t n = shape[*axis];

  Composer c(ctx);
  mlir::Type i64 = ctx.builder().getI64Type();
  mlir::Value v = Min ? c.unary<g::NegOp>(*x) : *x;
  mlir::Value m = c.reduce<g::ReduceMaxOp>(v, {*axis}, true);
  llvm::SmallVector<int64_t> rampShape(rank, 1);
  rampShape[*axis] = n;
  std::vector<double> ramp(n);
  for (int64_t i = 0; i < n; ++i)
    ramp[i] = double(last ? i : n - 1 - i);
  mlir::Value scores =
      c.select(c.compare("eq", v, m), c.constant(rampShape, i64, ramp),
               c.scalar(i64, -1));
  mlir::Value best = c.reduce<g::ReduceMaxOp>(scores, {*axis}, keepdims);
  return c.finish(last ? best : c.sub(c.scalar(i64, double(n - 1)), best));
}

} // namespace

void import::registerDecomposeShapeHandlers(HandlerTable &t) {
  t["Trilu"] = trilu;
  t["Tile"] = tile;
  t["CumSum"] = cumSum;
  t["OneHot"] = oneHot;
  t["Size"] = size;
  t["ArgMax"] = argExtreme<false>;
  t["ArgMin"] = argExtreme<true>;
}
