//===- UnpackProjections.cpp - graph-unpack-projections -------------------===//
//
// Rewrites slices of the last dim of a packed projection (matmul, then
// elementwise bias ops) into one projection per slice over views of the
// weight and bias (docs/Design.md §3.1), so head-parallel attention is
// expressible on PyTorch exports. A slice is either a graph.slice or
// graph.split of the packed value, or a graph.gather of one index of the
// packed dim after a reshape splits it into [k, E] (PyTorch 2.x).
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "Graph/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace weft::graph {
#define GEN_PASS_DEF_UNPACKPROJECTIONS
#include "Graph/Transforms/Passes.h.inc"
} // namespace weft::graph

using namespace mlir;
using namespace weft::graph;

namespace {

/// Elements start, start + step, ... below limit of a tensor's last dim.
struct Window {
  int64_t start = 0, limit = 0, step = 1;

  int64_t extent() const { return (limit - start + step - 1) / step; }
};

ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

/// `v`'s type with its last dim set to `extent`.
RankedTensorType withLastDim(Value v, int64_t extent) {
  auto type = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = extent;
  return RankedTensorType::get(shape, type.getElementType());
}

/// The window of a slice that takes part of its input's last dim and the
/// whole of every other dim.
std::optional<Window> lastDimWindow(SliceOp slice) {
  ArrayRef<int64_t> in = shapeOf(slice.getInput());
  ArrayRef<int64_t> starts = slice.getStarts(), limits = slice.getLimits(),
                    steps = slice.getSteps();
  int64_t last = int64_t(in.size()) - 1;
  if (last < 0)
    return std::nullopt;
  for (int64_t d = 0; d < last; ++d)
    if (starts[d] != 0 || limits[d] != in[d] || steps[d] != 1)
      return std::nullopt;
  Window w{starts[last], limits[last], steps[last]};
  if (w.start == 0 && w.limit == in[last] && w.step == 1)
    return std::nullopt;
  return w;
}

/// Whether `split` cuts its input's last dim into several pieces.
bool splitsLastDim(SplitOp split) {
  int64_t rank = shapeOf(split.getInput()).size();
  int64_t axis = split.getAxis();
  return rank > 0 && (axis == rank - 1 || axis == -1) &&
         split.getNumResults() > 1;
}

/// The windows of a split's pieces, in order.
SmallVector<Window> pieceWindows(SplitOp split) {
  SmallVector<Window> windows;
  int64_t start = 0;
  for (Value piece : split.getResults()) {
    int64_t extent = shapeOf(piece).back();
    windows.push_back({start, start + extent, 1});
    start += extent;
  }
  return windows;
}

/// Whether `op` is elementwise, so that slicing its result's last dim is
/// slicing each operand's (broadcast operands aside).
bool isElementwiseBinary(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp>(op);
}

/// Whether `v` has the last dim of `packed` (`extent`) as its own last dim:
/// such an operand is sliced; others are broadcast along it and stay whole.
bool hasPackedDim(Value v, int64_t extent) {
  ArrayRef<int64_t> shape = shapeOf(v);
  return !shape.empty() && shape.back() == extent && extent != 1;
}

/// Follows a packed value down to its matmul, through elementwise binary
/// ops whose other operand is a bias or a scale. Returns the ops on the way,
/// from the packed value's producer to the matmul, or nothing if there is no
/// such chain. Every op but the first must have one use, so that the packed
/// computation disappears.
std::optional<SmallVector<Operation *>> projectionChain(Value packed) {
  SmallVector<Operation *> chain;
  Value v = packed;
  int64_t extent = shapeOf(packed).back();
  while (Operation *op = v.getDefiningOp()) {
    if (!chain.empty() && !v.hasOneUse())
      return std::nullopt;
    chain.push_back(op);
    if (isa<MatMulOp>(op))
      return chain;
    if (!isElementwiseBinary(op))
      return std::nullopt;
    // Continue through the operand that is itself produced by a matmul or
    // an elementwise op with the full packed shape.
    Value next;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && (isa<MatMulOp>(def) || isElementwiseBinary(def)) &&
          shapeOf(operand) == shapeOf(op->getResult(0)) &&
          hasPackedDim(operand, extent)) {
        next = operand;
        break;
      }
    }
    if (!next)
      return std::nullopt;
    v = next;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Picks: gathers of one index of the packed dim, split by a reshape
//===----------------------------------------------------------------------===//

// Labels of the dims of a view of a packed value of rank r (a chain of
// reshapes and transposes): dim d < r - 1 of the packed value is labelled d;
// the packed last dim is kPacked until a reshape splits it into [k, E],
// labelled kPick (the index of the slice) and kWithin (the column within
// it). Size-1 dims index nothing and are labelled kUnit, wherever they came
// from, so reshapes that only insert or drop them keep the element order.
constexpr int64_t kUnit = -1, kPacked = -2, kPick = -3, kWithin = -4;

/// The labels of the dims of a view of the packed value, and E once the
/// packed dim is split.
struct View {
  SmallVector<int64_t> labels;
  int64_t within = 0;
};

bool hasStaticShape(Value v) {
  return v.getType().cast<RankedTensorType>().hasStaticShape();
}

/// The packed value seen as itself. Its last dim is the packed dim.
std::optional<View> packedView(Value packed) {
  if (!hasStaticShape(packed))
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(packed);
  if (shape.empty() || shape.back() <= 1)
    return std::nullopt;
  View view;
  for (int64_t d = 0, last = shape.size() - 1; d < last; ++d)
    view.labels.push_back(shape[d] == 1 ? kUnit : d);
  view.labels.push_back(kPacked);
  return view;
}

/// The positions of the dims of `shape` that are not 1.
SmallVector<int64_t> nonUnitDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    if (shape[d] != 1)
      dims.push_back(d);
  return dims;
}

/// The view after `reshape`, which must insert or drop size-1 dims only, or
/// also split the packed dim in two (neither of size 1).
std::optional<View> reshapeView(const View &in, ReshapeOp reshape) {
  if (!hasStaticShape(reshape.getResult()))
    return std::nullopt;
  ArrayRef<int64_t> inShape = shapeOf(reshape.getInput()),
                    outShape = shapeOf(reshape.getResult());
  SmallVector<int64_t> ins = nonUnitDims(inShape), outs = nonUnitDims(outShape);
  View out{SmallVector<int64_t>(outShape.size(), kUnit), in.within};
  auto sameExtents = [&](size_t i, size_t o) {
    return inShape[ins[i]] == outShape[outs[o]];
  };
  if (ins.size() == outs.size()) {
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!sameExtents(i, i))
        return std::nullopt;
      out.labels[outs[i]] = in.labels[ins[i]];
    }
    return out;
  }
  // A split of the packed dim: the non-unit dims agree but for the packed
  // one, which becomes two.
  auto packed =
      llvm::find_if(ins, [&](int64_t d) { return in.labels[d] == kPacked; });
  if (packed == ins.end() || outs.size() != ins.size() + 1)
    return std::nullopt;
  size_t p = packed - ins.begin();
  for (size_t i = 0; i < ins.size(); ++i) {
    if (i == p)
      continue;
    size_t o = i < p ? i : i + 1;
    if (!sameExtents(i, o))
      return std::nullopt;
    out.labels[outs[o]] = in.labels[ins[i]];
  }
  // The element counts agree, so the two dims multiply to the packed one.
  out.labels[outs[p]] = kPick;
  out.labels[outs[p + 1]] = kWithin;
  out.within = outShape[outs[p + 1]];
  return out;
}

/// The view after `op`, a reshape or transpose of a view, or nothing.
std::optional<View> nextView(const View &in, Operation *op) {
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return reshapeView(in, reshape);
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    View out{{}, in.within};
    for (int64_t p : transpose.getPerm())
      out.labels.push_back(in.labels[p]);
    return out;
  }
  return std::nullopt;
}

/// The window of the packed value's last dim that `gather` of `view` picks:
/// a constant index i along the kPick dim, leaving the other dims in the
/// packed value's order with E last, is the window [i·E, (i+1)·E).
std::optional<Window> pickWindow(const View &view, GatherOp gather,
                                 Value packed) {
  int64_t axis = gather.getAxis();
  if (view.labels[axis] != kPick || !hasStaticShape(gather.getResult()))
    return std::nullopt;
  DenseIntElementsAttr index;
  if (!matchPattern(gather.getIndices(), m_Constant(&index)) ||
      index.getNumElements() != 1)
    return std::nullopt;
  int64_t picks = shapeOf(gather.getData())[axis];
  int64_t i = (*index.getValues<APInt>().begin()).getSExtValue();
  if (i < 0)
    i += picks;
  if (i < 0 || i >= picks)
    return std::nullopt;
  // The result's dims: the data's, with the single-element index's (all of
  // size 1) in place of the kPick dim.
  SmallVector<int64_t> left;
  for (int64_t d = 0, e = view.labels.size(); d < e; ++d)
    if (d != axis && view.labels[d] != kUnit)
      left.push_back(view.labels[d]);
  SmallVector<int64_t> expected;
  ArrayRef<int64_t> packedShape = shapeOf(packed);
  for (int64_t d = 0, last = packedShape.size() - 1; d < last; ++d)
    if (packedShape[d] != 1)
      expected.push_back(d);
  expected.push_back(kWithin);
  if (left != expected)
    return std::nullopt;
  return Window{i * view.within, (i + 1) * view.within, 1};
}

/// Whether every use of `v`, a view of `packed`, ends in a pick: a chain of
/// reshapes and transposes and then a gather with a window. A view with no
/// use is dead and allowed.
bool onlyPicks(Value v, const View &view, Value packed) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    if (auto gather = dyn_cast<GatherOp>(user))
      return gather.getData() == v &&
             pickWindow(view, gather, packed).has_value();
    std::optional<View> next = nextView(view, user);
    return next && onlyPicks(user->getResult(0), *next, packed);
  });
}

/// Whether every user of `packed` takes windows of its last dim: a slice
/// or split of it, or a view of it that ends in picks.
bool onlyLastDimWindows(Value packed) {
  return llvm::all_of(packed.getUsers(), [&](Operation *user) {
    if (auto slice = dyn_cast<SliceOp>(user))
      return lastDimWindow(slice).has_value();
    if (auto split = dyn_cast<SplitOp>(user))
      return splitsLastDim(split);
    if (!isa<ReshapeOp, TransposeOp>(user))
      return false;
    std::optional<View> view = packedView(packed);
    if (!view)
      return false;
    std::optional<View> next = nextView(*view, user);
    return next && onlyPicks(user->getResult(0), *next, packed);
  });
}

/// `v` restricted to window `w` of its last dim.
Value sliceLastDim(OpBuilder &b, Location loc, Value v, Window w) {
  ArrayRef<int64_t> shape = shapeOf(v);
  int64_t rank = shape.size();
  SmallVector<int64_t> starts(rank, 0), limits(shape), steps(rank, 1);
  starts.back() = w.start;
  limits.back() = w.limit;
  steps.back() = w.step;
  return b.create<SliceOp>(loc, withLastDim(v, w.extent()), v, starts, limits,
                           steps);
}

/// The columns `w` of a matmul's weight. A transposed parameter (torch's
/// `x @ W^T`) is sliced before the transpose, so the view is of the
/// parameter itself.
Value sliceWeightColumns(OpBuilder &b, Location loc, Value weight, Window w) {
  auto transpose = weight.getDefiningOp<TransposeOp>();
  if (!transpose)
    return sliceLastDim(b, loc, weight, w);
  Value source = transpose.getInput();
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t dim = perm.back();
  ArrayRef<int64_t> shape = shapeOf(source);
  int64_t rank = shape.size();
  SmallVector<int64_t> starts(rank, 0), limits(shape), steps(rank, 1),
      viewShape(shape);
  starts[dim] = w.start;
  limits[dim] = w.limit;
  steps[dim] = w.step;
  viewShape[dim] = w.extent();
  auto elementType = source.getType().cast<RankedTensorType>().getElementType();
  Value view =
      b.create<SliceOp>(loc, RankedTensorType::get(viewShape, elementType),
                        source, starts, limits, steps);
  return b.create<TransposeOp>(loc, withLastDim(weight, w.extent()), view,
                               perm);
}

/// Rebuilds `chain[i]` (and the chain below it) for window `w`.
Value rebuildWindow(OpBuilder &b, ArrayRef<Operation *> chain, size_t i,
                    Window w) {
  Operation *op = chain[i];
  Location loc = op->getLoc();
  Value result = op->getResult(0);
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    Value weight = sliceWeightColumns(b, loc, matmul.getRhs(), w);
    return b.create<MatMulOp>(loc, withLastDim(result, w.extent()),
                              matmul.getLhs(), weight);
  }
  int64_t extent = shapeOf(result).back();
  Value below = chain[i + 1]->getResult(0);
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    if (operand == below)
      operands.push_back(rebuildWindow(b, chain, i + 1, w));
    else if (hasPackedDim(operand, extent))
      operands.push_back(sliceLastDim(b, loc, operand, w));
    else
      operands.push_back(operand);
  }
  OperationState state(loc, op->getName());
  state.addOperands(operands);
  state.addTypes(withLastDim(result, w.extent()));
  state.addAttributes(op->getAttrs());
  return b.create(state)->getResult(0);
}

/// Whether `packed` is a projection every user of which takes windows of
/// its last dim; returns its chain down to the matmul.
std::optional<SmallVector<Operation *>> unpackableChain(Value packed) {
  if (shapeOf(packed).empty() || !onlyLastDimWindows(packed))
    return std::nullopt;
  return projectionChain(packed);
}

struct UnpackSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    std::optional<Window> window = lastDimWindow(slice);
    if (!window)
      return rewriter.notifyMatchFailure(slice, "not a last-dim window");
    auto chain = unpackableChain(slice.getInput());
    if (!chain)
      return rewriter.notifyMatchFailure(slice, "not a packed projection");
    rewriter.replaceOp(slice, rebuildWindow(rewriter, *chain, 0, *window));
    return success();
  }
};

struct UnpackSplit : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SplitOp split,
                                PatternRewriter &rewriter) const override {
    if (!splitsLastDim(split))
      return rewriter.notifyMatchFailure(split, "not a last-dim split");
    auto chain = unpackableChain(split.getInput());
    if (!chain)
      return rewriter.notifyMatchFailure(split, "not a packed projection");
    SmallVector<Value> pieces;
    for (Window w : pieceWindows(split))
      pieces.push_back(rebuildWindow(rewriter, *chain, 0, w));
    rewriter.replaceOp(split, pieces);
    return success();
  }
};

struct UnpackPick : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherOp gather,
                                PatternRewriter &rewriter) const override {
    // Up through the reshapes and transposes to the packed value.
    SmallVector<Operation *> views;
    Value packed = gather.getData();
    while (Operation *def = packed.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def))
        break;
      views.push_back(def);
      packed = def->getOperand(0);
    }
    std::optional<View> view = packedView(packed);
    if (views.empty() || !view)
      return rewriter.notifyMatchFailure(gather, "not a view of a packed dim");
    for (Operation *op : llvm::reverse(views))
      if (!(view = nextView(*view, op)))
        return rewriter.notifyMatchFailure(op, "not a split of the packed dim");
    std::optional<Window> window = pickWindow(*view, gather, packed);
    if (!window)
      return rewriter.notifyMatchFailure(gather,
                                         "not a pick of the packed dim");
    auto chain = unpackableChain(packed);
    if (!chain)
      return rewriter.notifyMatchFailure(gather, "not a packed projection");
    Value piece = rebuildWindow(rewriter, *chain, 0, *window);
    // A single-element index of rank > 0 leaves size-1 dims in the result.
    if (piece.getType() != gather.getType())
      piece =
          rewriter.create<ReshapeOp>(gather.getLoc(), gather.getType(), piece);
    rewriter.replaceOp(gather, piece);
    return success();
  }
};

struct UnpackProjectionsPass
    : weft::graph::impl::UnpackProjectionsBase<UnpackProjectionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnpackSlice, UnpackSplit, UnpackPick>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
