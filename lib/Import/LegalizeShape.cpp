//===- LegalizeShape.cpp - Data movement on non-constant tensors ----------===//
//
// Shape operands (reshape targets, slice bounds, axes) must be constants by
// now: the importer folds shape logic before it reaches these handlers.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

/// Any op that only changes the shape becomes a graph.reshape to the type
/// shape inference gave its result.
static llvm::Error toReshape(NodeContext &ctx) {
  return emitFromInput<g::ReshapeOp, /*SkipIfSameType=*/true>(ctx);
}

static llvm::Error transpose(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  std::vector<int64_t> perm = ctx.attrInts("perm");
  if (perm.empty())
    for (int64_t d = shapeOf(*in).size() - 1; d >= 0; --d)
      perm.push_back(d);
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  ctx.setResult(
      0, ctx.builder().create<g::TransposeOp>(
             ctx.loc(), *type, *in, ctx.builder().getDenseI64ArrayAttr(perm)));
  return llvm::Error::success();
}

static llvm::Error concat(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> ins;
  for (int i = 0; i < ctx.getNode().input_size(); ++i) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    ins.push_back(*v);
  }
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  int64_t axis = ctx.attrInt("axis", 0);
  if (axis < 0)
    axis += type->getRank();
  ctx.setResult(
      0, ctx.builder().create<g::ConcatOp>(
             ctx.loc(), *type, ins, ctx.builder().getI64IntegerAttr(axis)));
  return llvm::Error::success();
}

static llvm::Error split(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  llvm::SmallVector<mlir::Type> types;
  for (int i = 0; i < ctx.getNode().output_size(); ++i) {
    auto t = ctx.resultType(i);
    if (!t)
      return t.takeError();
    types.push_back(*t);
  }
  int64_t axis = ctx.attrInt("axis", 0);
  if (axis < 0)
    axis += shapeOf(*in).size();
  auto op = ctx.builder().create<g::SplitOp>(
      ctx.loc(), types, *in, ctx.builder().getI64IntegerAttr(axis));
  for (auto [i, r] : llvm::enumerate(op.getResults()))
    ctx.setResult(i, r);
  return llvm::Error::success();
}

static llvm::Error slice(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  llvm::ArrayRef<int64_t> shape = shapeOf(*in);
  int64_t rank = shape.size();
  auto starts = ctx.constantInts(1, "slice starts");
  if (!starts)
    return starts.takeError();
  auto ends = ctx.constantInts(2, "slice ends");
  if (!ends)
    return ends.takeError();
  std::vector<int64_t> axes, steps;
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "slice axes");
    if (!a)
      return a.takeError();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    auto s = ctx.constantInts(4, "slice steps");
    if (!s)
      return s.takeError();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  std::vector<int64_t> lo(rank, 0), hi(shape.begin(), shape.end()),
      step(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (steps[i] <= 0)
      return ctx.unsupported("slices with negative steps");
    int64_t n = shape[a];
    int64_t s = (*starts)[i] < 0 ? (*starts)[i] + n : (*starts)[i];
    int64_t e = (*ends)[i] < 0 ? (*ends)[i] + n : (*ends)[i];
    lo[a] = std::clamp<int64_t>(s, 0, n);
    hi[a] = std::clamp<int64_t>(e, lo[a], n);
    step[a] = steps[i];
  }
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0, b.create<g::SliceOp>(ctx.loc(), *type, *in,
                                        b.getDenseI64ArrayAttr(lo),
                                        b.getDenseI64ArrayAttr(hi),
                                        b.getDenseI64ArrayAttr(step)));
  return llvm::Error::success();
}

static llvm::Error gather(NodeContext &ctx) {
  auto data = ctx.input(0), indices = ctx.input(1);
  if (!data)
    return data.takeError();
  if (!indices)
    return indices.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  int64_t axis = ctx.attrInt("axis", 0);
  if (axis < 0)
    axis += shapeOf(*data).size();
  ctx.setResult(0, ctx.builder().create<g::GatherOp>(
                       ctx.loc(), *type, *data, *indices,
                       ctx.builder().getI64IntegerAttr(axis)));
  return llvm::Error::success();
}

static llvm::Error flatten(NodeContext &ctx) {
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0) {
    auto in = ctx.input(0);
    if (!in)
      return in.takeError();
    axis += shapeOf(*in).size();
  }
  return emitFromInput<g::FlattenOp>(ctx,
                                     ctx.builder().getI64IntegerAttr(axis));
}

static llvm::Error expand(NodeContext &ctx) {
  return emitFromInput<g::ExpandOp, /*SkipIfSameType=*/true>(ctx);
}

/// Pad with all-zero pads (PyTorch emits them before some poolings) is the
/// identity; real padding is folded into conv/pool `pads` by exporters.
static llvm::Error pad(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  std::vector<int64_t> pads = ctx.attrInts("pads");
  if (ctx.hasInput(1)) {
    auto c = ctx.constantInts(1, "pads");
    if (!c)
      return c.takeError();
    pads = *c;
  }
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; }))
    return ctx.unsupported("non-zero padding outside a convolution or pool");
  ctx.setResult(0, *in);
  return llvm::Error::success();
}

void import::registerShapeHandlers(HandlerTable &t) {
  t["Pad"] = pad;
  t["Reshape"] = toReshape;
  t["Unsqueeze"] = toReshape;
  t["Squeeze"] = toReshape;
  t["Transpose"] = transpose;
  t["Concat"] = concat;
  t["Split"] = split;
  t["Slice"] = slice;
  t["Gather"] = gather;
  t["Flatten"] = flatten;
  t["Expand"] = expand;
}
