//===- DimMap.cpp - Where each operand dim of a graph op goes -------------===//

#include "DimMap.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace weft;
using namespace weft::baselines;
namespace g = weft::graph;
using mlir::RankedTensorType;

static RankedTensorType typeOf(mlir::Value v) {
  return v.getType().cast<RankedTensorType>();
}

/// Every dim whole.
static DimMap wholeMap(mlir::Operation *op) {
  DimMap map;
  for (mlir::Value v : op->getOperands())
    map.emplace_back(typeOf(v).getRank(), DimTarget());
  return map;
}

/// Broadcasting elementwise: operand dims aligned from the right map to the
/// result dim of the same extent; broadcast dims stay whole.
static DimMap elementwiseMap(mlir::Operation *op) {
  DimMap map = wholeMap(op);
  auto result = typeOf(op->getResult(0));
  for (auto [o, v] : llvm::enumerate(op->getOperands())) {
    auto t = typeOf(v);
    for (int64_t j = 0; j < t.getRank(); ++j) {
      int64_t i = j + result.getRank() - t.getRank();
      if (i >= 0 && t.getDimSize(j) == result.getDimSize(i) &&
          t.getDimSize(j) > 1)
        map[o][j] = DimTarget::result(i);
    }
  }
  return map;
}

/// The same dims, except those in `whole`.
static DimMap sameDimsExcept(mlir::Operation *op,
                             llvm::ArrayRef<int64_t> whole) {
  DimMap map = wholeMap(op);
  for (int64_t j = 0; j < int64_t(map[0].size()); ++j)
    if (!llvm::is_contained(whole, j))
      map[0][j] = DimTarget::result(j);
  return map;
}

static DimMap matmulMap(g::MatMulOp op) {
  DimMap map = wholeMap(op);
  auto a = typeOf(op.getLhs()), b = typeOf(op.getRhs());
  auto r = typeOf(op.getResult());
  int64_t ra = a.getRank(), rb = b.getRank(), rr = r.getRank();
  if (ra < 2 || rb < 2)
    return map;
  for (int64_t j = 0; j < ra - 2; ++j)
    if (a.getDimSize(j) == r.getDimSize(j + rr - ra))
      map[0][j] = DimTarget::result(j + rr - ra);
  map[0][ra - 2] = DimTarget::result(rr - 2);
  map[0][ra - 1] = DimTarget::contract();
  for (int64_t j = 0; j < rb - 2; ++j)
    if (b.getDimSize(j) == r.getDimSize(j + rr - rb))
      map[1][j] = DimTarget::result(j + rr - rb);
  map[1][rb - 2] = DimTarget::contract();
  map[1][rb - 1] = DimTarget::result(rr - 1);
  return map;
}

/// Reshape rule (DESIGN.md §3.3): factor into groups of equal products; the
/// major-most input dim of a group maps to the major-most output dim.
static DimMap reshapeMap(mlir::Operation *op) {
  DimMap map = wholeMap(op);
  auto in = typeOf(op->getOperand(0)).getShape();
  auto out = typeOf(op->getResult(0)).getShape();
  size_t i = 0, o = 0;
  while (i < in.size() && o < out.size()) {
    size_t gi = i, go = o;
    int64_t pi = in[i++], po = out[o++];
    while (pi != po) {
      if (pi < po && i < in.size())
        pi *= in[i++];
      else if (po < pi && o < out.size())
        po *= out[o++];
      else
        return map;
    }
    // Skip size-1 leading dims so the major-most real dims meet.
    while (gi + 1 < i && in[gi] == 1)
      ++gi;
    while (go + 1 < o && out[go] == 1)
      ++go;
    map[0][gi] = DimTarget::result(go, out[go], in[gi]);
  }
  return map;
}

static DimMap lossMap(mlir::Operation *op) {
  DimMap map = wholeMap(op);
  auto logits = typeOf(op->getOperand(0));
  bool reduced = typeOf(op->getResult(0)).getRank() == 0;
  for (int64_t j = 0; j + 1 < logits.getRank(); ++j)
    map[0][j] = reduced ? DimTarget::contract() : DimTarget::result(j);
  for (int64_t j = 0; j < typeOf(op->getOperand(1)).getRank(); ++j)
    map[1][j] = reduced ? DimTarget::contract() : DimTarget::result(j);
  return map;
}

template <typename ReduceOp> static DimMap reduceMap(ReduceOp op, bool linear) {
  DimMap map = wholeMap(op);
  llvm::ArrayRef<int64_t> axes = op.getAxes();
  int64_t rank = map[0].size(), out = 0;
  for (int64_t j = 0; j < rank; ++j) {
    bool reducedDim =
        llvm::is_contained(axes, j) || llvm::is_contained(axes, j - rank);
    if (!reducedDim)
      map[0][j] = DimTarget::result(out++);
    else {
      map[0][j] = linear ? DimTarget::contract() : DimTarget();
      if (op.getKeepdims())
        ++out;
    }
  }
  return map;
}

DimMap baselines::mapDims(mlir::Operation *op) {
  if (auto mm = llvm::dyn_cast<g::MatMulOp>(op))
    return matmulMap(mm);
  if (llvm::isa<g::ReshapeOp, g::FlattenOp>(op))
    return reshapeMap(op);
  if (auto t = llvm::dyn_cast<g::TransposeOp>(op)) {
    DimMap map = wholeMap(op);
    for (auto [i, p] : llvm::enumerate(t.getPerm()))
      map[0][p] = DimTarget::result(i);
    return map;
  }
  if (llvm::isa<g::SoftmaxOp, g::LogSoftmaxOp>(op)) {
    int64_t axis = op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
    int64_t rank = typeOf(op->getOperand(0)).getRank();
    return sameDimsExcept(op, {axis < 0 ? axis + rank : axis});
  }
  if (auto ln = llvm::dyn_cast<g::LayerNormOp>(op)) {
    int64_t rank = typeOf(ln.getInput()).getRank();
    int64_t axis = ln.getAxis();
    if (axis < 0)
      axis += rank;
    llvm::SmallVector<int64_t> whole;
    for (int64_t j = axis; j < rank; ++j)
      whole.push_back(j);
    return sameDimsExcept(op, whole);
  }
  if (llvm::isa<g::CrossEntropyOp, g::NllLossOp>(op))
    return lossMap(op);
  if (auto r = llvm::dyn_cast<g::ReduceSumOp>(op))
    return reduceMap(r, true);
  if (auto r = llvm::dyn_cast<g::ReduceMeanOp>(op))
    return reduceMap(r, true);
  if (auto r = llvm::dyn_cast<g::ReduceMaxOp>(op))
    return reduceMap(r, false);
  if (auto gather = llvm::dyn_cast<g::GatherOp>(op)) {
    DimMap map = wholeMap(op);
    int64_t axis = gather.getAxis();
    int64_t idxRank = typeOf(gather.getIndices()).getRank();
    for (int64_t j = 0; j < int64_t(map[0].size()); ++j)
      if (j != axis)
        map[0][j] = DimTarget::result(j < axis ? j : j - 1 + idxRank);
    for (int64_t k = 0; k < idxRank; ++k)
      map[1][k] = DimTarget::result(axis + k);
    return map;
  }
  // Batch (and channel) dims only: the window or statistics dims stay whole
  // (batch_norm then uses per-device statistics, as data-parallel PyTorch
  // does without SyncBatchNorm).
  if (llvm::isa<g::Conv2dOp>(op))
    return sameDimsExcept(op, {1, 2, 3});
  if (llvm::isa<g::MaxPoolOp, g::AvgPoolOp, g::GlobalAvgPoolOp, g::BatchNormOp>(
          op))
    return sameDimsExcept(op, {2, 3});
  if (llvm::isa<g::Top2GatingOp>(op)) {
    DimMap map = wholeMap(op);
    map[0][0] = DimTarget::result(0);
    return map;
  }
  if (auto c = llvm::dyn_cast<g::ConcatOp>(op)) {
    DimMap map = elementwiseMap(op);
    for (auto &dims : map)
      dims[c.getAxis()] = DimTarget();
    return map;
  }
  if (llvm::isa<g::SplitOp>(op)) {
    int64_t axis = op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
    return sameDimsExcept(op, {axis});
  }
  if (op->getNumResults() == 1)
    return elementwiseMap(op);
  return wholeMap(op);
}
