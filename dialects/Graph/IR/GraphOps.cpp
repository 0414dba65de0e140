//===- GraphOps.cpp - Verifiers and folders of the graph dialect ----------===//

#include "Graph/IR/GraphOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace weft::graph;

#include "Graph/IR/GraphInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

static int64_t rankOf(Value v) { return shapeOf(v).size(); }

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, "x");
  os << "]";
  return os.str();
}

/// Checks that `axis` names a dimension of a rank-`rank` tensor (negative
/// values count from the end).
static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                                StringRef what = "axis") {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return op->emitOpError()
           << what << " " << axis << " is out of range for rank " << rank;
  return success();
}

static LogicalResult verifySameShape(Operation *op, ArrayRef<int64_t> expected,
                                     ArrayRef<int64_t> found,
                                     StringRef what = "result") {
  if (expected == found)
    return success();
  return op->emitOpError() << "expected " << what << " shape "
                           << shapeString(expected) << ", found "
                           << shapeString(found);
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

template <typename LeafOp> static LogicalResult verifyLeaf(LeafOp op) {
  if (op.getName().empty())
    return op.emitOpError("expected a non-empty name");
  if (auto value = op.getValueAttr())
    if (value.getType() != op.getType())
      return op.emitOpError() << "value type " << value.getType()
                              << " differs from result type " << op.getType();
  return success();
}

LogicalResult ParameterOp::verify() {
  if (!getType().cast<RankedTensorType>().getElementType().isa<FloatType>())
    return emitOpError("expected a floating-point parameter; integer tensors "
                       "are buffers");
  return verifyLeaf(*this);
}

LogicalResult BufferOp::verify() { return verifyLeaf(*this); }

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " differs from result type " << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs()),
                    res = shapeOf(getResult());
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOpError("expected operands of rank >= 2");
  if (lhs.back() != rhs[rhs.size() - 2])
    return emitOpError() << "contraction dims differ: lhs " << shapeString(lhs)
                         << " vs rhs " << shapeString(rhs);
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(lhs.drop_back(2), rhs.drop_back(2),
                                          batch))
    return emitOpError("batch dimensions are not broadcast-compatible");
  batch.push_back(lhs[lhs.size() - 2]);
  batch.push_back(rhs.back());
  return verifySameShape(*this, batch, res);
}

static int64_t windowedExtent(int64_t in, int64_t kernel, int64_t stride,
                              int64_t padBefore, int64_t padAfter,
                              int64_t dilation = 1) {
  int64_t effective = dilation * (kernel - 1) + 1;
  return (in + padBefore + padAfter - effective) / stride + 1;
}

static LogicalResult verifyWindowAttrs(Operation *op, ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> pads) {
  if (strides.size() != 2 || pads.size() != 4)
    return op->emitOpError("expected 2 strides and 4 pads");
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }))
    return op->emitOpError("expected positive strides");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op->emitOpError("expected non-negative pads");
  return success();
}

LogicalResult Conv2dOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    res = shapeOf(getResult());
  if (in.size() != 4 || w.size() != 4)
    return emitOpError("expected 4-d input (NCHW) and weight (OIHW)");
  if (failed(verifyWindowAttrs(*this, getStrides(), getPads())))
    return failure();
  ArrayRef<int64_t> dil = getDilations();
  if (dil.size() != 2 || dil[0] <= 0 || dil[1] <= 0)
    return emitOpError("expected 2 positive dilations");
  int64_t group = getGroup();
  if (group <= 0 || in[1] % group || w[0] % group)
    return emitOpError() << "group " << group
                         << " does not divide the channel counts";
  if (w[1] * group != in[1])
    return emitOpError() << "weight expects " << w[1] * group
                         << " input channels, input has " << in[1];
  if (getBias() && shapeOf(getBias()) != ArrayRef<int64_t>{w[0]})
    return emitOpError() << "expected bias of " << w[0] << " elements";
  ArrayRef<int64_t> s = getStrides(), p = getPads();
  SmallVector<int64_t> expected{
      in[0], w[0], windowedExtent(in[2], w[2], s[0], p[0], p[2], dil[0]),
      windowedExtent(in[3], w[3], s[1], p[1], p[3], dil[1])};
  return verifySameShape(*this, expected, res);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::verify() {
  static constexpr StringLiteral predicates[] = {"eq", "ne", "lt",
                                                 "le", "gt", "ge"};
  if (!llvm::is_contained(predicates, getPredicate()))
    return emitOpError() << "unknown predicate '" << getPredicate()
                         << "' (expected eq, ne, lt, le, gt or ge)";
  return success();
}

LogicalResult SelectOp::verify() {
  Type lhs = getLhs().getType().cast<RankedTensorType>().getElementType();
  Type rhs = getRhs().getType().cast<RankedTensorType>().getElementType();
  Type res = getType().cast<RankedTensorType>().getElementType();
  if (lhs != rhs || lhs != res)
    return emitOpError("expected lhs, rhs and result of one element type");
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToDouble() > getMax()->convertToDouble())
    return emitOpError("expected min <= max");
  return success();
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), res = shapeOf(getResult());
  if (in.size() > res.size())
    return emitOpError("cannot expand to a lower rank");
  size_t offset = res.size() - in.size();
  for (auto [i, d] : llvm::enumerate(in))
    if (d != 1 && d != res[offset + i])
      return emitOpError() << "cannot broadcast " << shapeString(in) << " to "
                           << shapeString(res);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), rankOf(getInput()));
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), rankOf(getInput()));
}

LogicalResult LayerNormOp::verify() {
  int64_t rank = rankOf(getInput());
  // I64Attr getters return uint64_t: convert before comparing with zero.
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, rank)))
    return failure();
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> normalized = shapeOf(getInput()).drop_front(axis);
  if (failed(
          verifySameShape(*this, normalized, shapeOf(getScale()), "scale")) ||
      failed(verifySameShape(*this, normalized, shapeOf(getBias()), "bias")))
    return failure();
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("expected a positive epsilon");
  return verifySameShape(*this, shapeOf(getInput()), shapeOf(getResult()));
}

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.size() < 2)
    return emitOpError("expected an input of rank >= 2 (N x C x ...)");
  SmallVector<int64_t> channels{in[1]};
  for (Value v : {getScale(), getBias(), getRunningMean(), getRunningVar()})
    if (failed(verifySameShape(*this, channels, shapeOf(v), "per-channel")))
      return failure();
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("expected a positive epsilon");
  return verifySameShape(*this, in, shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduce(Operation *op, ArrayRef<int64_t> axes,
                                  bool keepdims) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  int64_t rank = in.size();
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return op->emitOpError()
             << "axis " << axes[i] << " is out of range for rank " << rank;
    if (i && axes[i] <= axes[i - 1])
      return op->emitOpError("expected sorted, unique axes");
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      expected.push_back(in[d]);
    else if (keepdims)
      expected.push_back(1);
  }
  return verifySameShape(op, expected, shapeOf(op->getResult(0)));
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

static LogicalResult verifyViewTypes(Operation *op) {
  auto in = op->getOperand(0).getType().cast<RankedTensorType>();
  auto res = op->getResult(0).getType().cast<RankedTensorType>();
  if (in.getElementType() != res.getElementType())
    return op->emitOpError("expected the same element type");
  if (product(in.getShape()) != product(res.getShape()))
    return op->emitOpError()
           << "element counts differ: " << shapeString(in.getShape()) << " vs "
           << shapeString(res.getShape());
  return success();
}

LogicalResult ReshapeOp::verify() { return verifyViewTypes(*this); }

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult FlattenOp::verify() {
  int64_t rank = rankOf(getInput());
  int64_t axis = getAxis();
  if (axis < 0 || axis > rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (failed(verifyViewTypes(*this)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput());
  SmallVector<int64_t> expected{product(in.take_front(getAxis())),
                                product(in.drop_front(getAxis()))};
  return verifySameShape(*this, expected, shapeOf(getResult()));
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), perm = getPerm();
  if (perm.size() != in.size())
    return emitOpError() << "expected a permutation of " << in.size()
                         << " dims, found " << perm.size();
  SmallVector<int64_t> expected;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || !seen.insert(p).second)
      return emitOpError("perm is not a permutation");
    expected.push_back(in[p]);
  }
  return verifySameShape(*this, expected, shapeOf(getResult()));
}

/// Checks that `pieces` agree with `whole` except along `axis`, where their
/// extents add up to the whole's.
static LogicalResult verifyPieces(Operation *op, ArrayRef<int64_t> whole,
                                  ValueRange pieces, int64_t axis) {
  if (pieces.empty())
    return op->emitOpError("expected at least one piece");
  if (failed(verifyAxis(op, axis, whole.size())))
    return failure();
  if (axis < 0)
    axis += whole.size();
  int64_t sum = 0;
  for (Value v : pieces) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() != whole.size())
      return op->emitOpError("pieces differ in rank");
    for (size_t d = 0; d < s.size(); ++d)
      if ((int64_t)d != axis && s[d] != whole[d])
        return op->emitOpError()
               << "pieces differ in dim " << d << " (only the axis may differ)";
    sum += s[axis];
  }
  if (sum != whole[axis])
    return op->emitOpError() << "pieces add up to " << sum << " along axis "
                             << axis << ", expected " << whole[axis];
  return success();
}

LogicalResult ConcatOp::verify() {
  return verifyPieces(*this, shapeOf(getResult()), getInputs(), getAxis());
}

LogicalResult SplitOp::verify() {
  return verifyPieces(*this, shapeOf(getInput()), getResults(), getAxis());
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    steps = getSteps();
  if (starts.size() != in.size() || limits.size() != in.size() ||
      steps.size() != in.size())
    return emitOpError() << "expected one start, limit and step per dim ("
                         << in.size() << ")";
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < in.size(); ++d) {
    if (steps[d] <= 0)
      return emitOpError("expected positive steps");
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > in[d])
      return emitOpError() << "window [" << starts[d] << ", " << limits[d]
                           << ") is outside dim " << d << " of extent "
                           << in[d];
    expected.push_back((limits[d] - starts[d] + steps[d] - 1) / steps[d]);
  }
  return verifySameShape(*this, expected, shapeOf(getResult()));
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)data.size())
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << data.size();
  SmallVector<int64_t> expected(data.take_front(getAxis()));
  expected.append(idx.begin(), idx.end());
  expected.append(data.begin() + getAxis() + 1, data.end());
  return verifySameShape(*this, expected, shapeOf(getResult()));
}

LogicalResult GatherElementsOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t axis = getAxis(), rank = data.size();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (idx.size() != data.size())
    return emitOpError() << "expected indices of the data's rank " << rank
                         << ", found " << shapeString(idx);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx[d] > data[d])
      return emitOpError() << "indices " << shapeString(idx)
                           << " are larger than the data " << shapeString(data)
                           << " in dim " << d;
  return verifySameShape(*this, idx, shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// A pool over the 2 or 3 spatial dims of an N×C×… input: one kernel,
/// stride and dilation per spatial dim, pads before each and then after
/// each.
static LogicalResult verifyPool(Operation *op, ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads,
                                std::optional<ArrayRef<int64_t>> dilations) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  if (in.size() != 4 && in.size() != 5)
    return op->emitOpError("expected a 4-d (NCHW) or 5-d (NCDHW) input");
  size_t spatial = in.size() - 2;
  auto positive = [](int64_t v) { return v > 0; };
  if (kernel.size() != spatial || !llvm::all_of(kernel, positive))
    return op->emitOpError()
           << "expected a positive " << spatial << "-d kernel";
  if (strides.size() != spatial || pads.size() != 2 * spatial)
    return op->emitOpError() << "expected " << spatial << " strides and "
                             << 2 * spatial << " pads";
  if (!llvm::all_of(strides, positive))
    return op->emitOpError("expected positive strides");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op->emitOpError("expected non-negative pads");
  SmallVector<int64_t> dil(spatial, 1);
  if (dilations) {
    if (dilations->size() != spatial || !llvm::all_of(*dilations, positive))
      return op->emitOpError()
             << "expected " << spatial << " positive dilations";
    dil.assign(dilations->begin(), dilations->end());
  }
  SmallVector<int64_t> expected{in[0], in[1]};
  for (size_t d = 0; d < spatial; ++d)
    expected.push_back(windowedExtent(in[2 + d], kernel[d], strides[d], pads[d],
                                      pads[spatial + d], dil[d]));
  return verifySameShape(op, expected, shapeOf(op->getResult(0)));
}

LogicalResult MaxPoolOp::verify() {
  return verifyPool(*this, getKernel(), getStrides(), getPads(),
                    getDilations());
}

LogicalResult AvgPoolOp::verify() {
  return verifyPool(*this, getKernel(), getStrides(), getPads(),
                    getDilations());
}

LogicalResult GlobalAvgPoolOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.size() < 3)
    return emitOpError("expected an input of rank >= 3 (N x C x spatial)");
  SmallVector<int64_t> expected{in[0], in[1]};
  expected.append(in.size() - 2, 1);
  return verifySameShape(*this, expected, shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Regularisation, losses, mixture of experts
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (ratio < 0 || ratio >= 1)
    return emitOpError() << "ratio " << ratio << " is outside [0, 1)";
  return success();
}

static LogicalResult verifyLoss(Operation *op, StringRef reduction) {
  if (reduction != "mean" && reduction != "sum")
    return op->emitOpError()
           << "unknown reduction '" << reduction << "' (expected mean or sum)";
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  if (in.size() < 2)
    return op->emitOpError("expected input of rank >= 2 (N x C x ...)");
  SmallVector<int64_t> expected{in[0]};
  expected.append(in.begin() + 2, in.end());
  return verifySameShape(op, expected, shapeOf(op->getOperand(1)), "labels");
}

LogicalResult CrossEntropyOp::verify() {
  return verifyLoss(*this, getReduction());
}

LogicalResult NllLossOp::verify() { return verifyLoss(*this, getReduction()); }

LogicalResult Top2GatingOp::verify() {
  ArrayRef<int64_t> tok = shapeOf(getTokens()), gate = shapeOf(getGate());
  if (tok.size() != 3 || gate.size() != 2)
    return emitOpError("expected tokens G x S x H and gate H x E");
  if (gate[0] != tok[2])
    return emitOpError() << "gate expects hidden size " << gate[0]
                         << ", tokens have " << tok[2];
  ArrayRef<int64_t> dispatch = shapeOf(getDispatch());
  if (dispatch.size() != 4 || dispatch[0] != tok[0] || dispatch[1] != tok[1] ||
      dispatch[2] != gate[1] || dispatch[3] <= 0)
    return emitOpError() << "expected dispatch G x S x E x C = " << tok[0]
                         << "x" << tok[1] << "x" << gate[1] << "xC, found "
                         << shapeString(dispatch);
  if (getDispatch().getType() != getCombine().getType())
    return emitOpError("expected dispatch and combine of one type");
  return success();
}

#define GET_OP_CLASSES
#include "Graph/IR/GraphOps.cpp.inc"
