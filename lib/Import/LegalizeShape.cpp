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

/// Gather and GatherElements (torch.gather, whose result has the indices'
/// shape): data, indices and a normalised axis.
template <typename OpTy> static llvm::Error gatherAlong(NodeContext &ctx) {
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
  ctx.setResult(
      0, ctx.builder().create<OpTy>(ctx.loc(), *type, *data, *indices,
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

/// A constant of `type` whose every element is `value`.
static mlir::Value splat(NodeContext &ctx, mlir::RankedTensorType type,
                         double value) {
  mlir::Type element = type.getElementType();
  mlir::Attribute v =
      element.isa<mlir::FloatType>()
          ? mlir::Attribute(ctx.builder().getFloatAttr(element, value))
          : mlir::Attribute(
                ctx.builder().getIntegerAttr(element, int64_t(value)));
  return ctx.builder().create<g::ConstantOp>(
      ctx.loc(), type, mlir::DenseElementsAttr::get(type, v));
}

/// Pad in `constant` mode: negative pads crop (a slice), positive ones
/// concatenate constants of the pad value before and after the input along
/// each padded axis. All-zero pads (PyTorch emits them before some
/// poolings) are the identity.
static llvm::Error pad(NodeContext &ctx) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  std::string mode = ctx.attrString("mode", "constant");
  if (mode != "constant")
    return ctx.unsupported("mode '" + mode + "' (only 'constant' padding)");
  std::vector<int64_t> pads = ctx.attrInts("pads");
  if (ctx.hasInput(1)) {
    auto c = ctx.constantInts(1, "pads");
    if (!c)
      return c.takeError();
    pads = *c;
  }
  double value = ctx.attrFloat("value", 0.0);
  if (ctx.hasInput(2)) {
    const ConstTensor *c = ctx.constantInput(2);
    if (!c || c->values.size() != 1)
      return ctx.unsupported("a pad value that is not a constant scalar");
    value = c->values[0];
  }
  int64_t rank = shapeOf(*in).size();
  std::vector<int64_t> axes;
  if (ctx.hasInput(3)) {
    auto a = ctx.constantInts(3, "pad axes");
    if (!a)
      return a.takeError();
    axes = *a;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.unsupported(std::to_string(pads.size()) + " pads for " +
                           std::to_string(axes.size()) + " axes");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank)
      return ctx.unsupported("pad axis " + std::to_string(axes[i]) +
                             " out of range");
    before[a] = pads[i];
    after[a] = pads[i + axes.size()];
  }
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  mlir::OpBuilder &b = ctx.builder();
  mlir::Value x = *in;
  auto tensorType = [&](llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, type->getElementType());
  };
  // Crop first.
  if (llvm::any_of(before, [](int64_t p) { return p < 0; }) ||
      llvm::any_of(after, [](int64_t p) { return p < 0; })) {
    llvm::SmallVector<int64_t> shape(shapeOf(x)), lo(rank, 0), hi(shape),
        step(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      lo[d] = std::min<int64_t>(std::max<int64_t>(-before[d], 0), shape[d]);
      hi[d] =
          std::max<int64_t>(shape[d] + std::min<int64_t>(after[d], 0), lo[d]);
      shape[d] = hi[d] - lo[d];
    }
    x = b.create<g::SliceOp>(
        ctx.loc(), tensorType(shape), x, b.getDenseI64ArrayAttr(lo),
        b.getDenseI64ArrayAttr(hi), b.getDenseI64ArrayAttr(step));
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lead = std::max<int64_t>(before[d], 0),
            trail = std::max<int64_t>(after[d], 0);
    if (!lead && !trail)
      continue;
    llvm::SmallVector<int64_t> shape(shapeOf(x));
    llvm::SmallVector<mlir::Value> pieces;
    auto fill = [&](int64_t n) {
      llvm::SmallVector<int64_t> s(shape);
      s[d] = n;
      pieces.push_back(splat(ctx, tensorType(s), value));
    };
    if (lead)
      fill(lead);
    pieces.push_back(x);
    if (trail)
      fill(trail);
    shape[d] += lead + trail;
    x = b.create<g::ConcatOp>(ctx.loc(), tensorType(shape), pieces,
                              b.getI64IntegerAttr(d));
  }
  ctx.setResult(0, x);
  return llvm::Error::success();
}

/// A ConstantOfShape too large to fold (a model's weights may be given that
/// way) is a splat graph.constant: one value, whatever its size.
static llvm::Error constantOfShape(NodeContext &ctx) {
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  double fill = 0;
  for (const auto &a : ctx.getNode().attribute()) {
    if (a.name() != "value")
      continue;
    auto v = readTensor(a.t());
    if (!v || v->values.size() != 1)
      return ctx.unsupported("a value that is not one number");
    fill = v->values[0];
  }
  ctx.setResult(0, splat(ctx, *type, fill));
  return llvm::Error::success();
}

void import::registerShapeHandlers(HandlerTable &t) {
  t["ConstantOfShape"] = constantOfShape;
  t["Pad"] = pad;
  t["Reshape"] = toReshape;
  t["Unsqueeze"] = toReshape;
  t["Squeeze"] = toReshape;
  t["Transpose"] = transpose;
  t["Concat"] = concat;
  t["Split"] = split;
  t["Slice"] = slice;
  t["Gather"] = gatherAlong<g::GatherOp>;
  t["GatherElements"] = gatherAlong<g::GatherElementsOp>;
  t["Flatten"] = flatten;
  t["Expand"] = expand;
}
