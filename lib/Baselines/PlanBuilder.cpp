//===- PlanBuilder.cpp - Turns a graph program into an spmd program -------===//

#include "PlanBuilder.h"
#include "DimMap.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::baselines;
using namespace weft::spmd;
using mlir::RankedTensorType;
using mlir::Value;

namespace {

/// The split chosen on one mesh axis for one op.
struct AxisChoice {
  DimTarget target;
  /// Segment on the operands, and on the results (a reshape rescales).
  int64_t inSegment = -1, outSegment = -1;
};

class Builder {
public:
  Builder(mlir::func::FuncOp target, const LayoutChoice &choice,
          SegmentTable &segments)
      : b(target.getContext()), choice(choice), segments(segments),
        numAxes(getMesh(target).getNumAxes()) {}

  llvm::Error run(mlir::func::FuncOp source, mlir::func::FuncOp target);

private:
  DistAttr replicated() {
    return DistAttr::replicated(b.getContext(), numAxes);
  }
  DistAttr distOf(Value v) {
    DistAttr d = getDist(v);
    return d ? d : replicated();
  }
  RankedTensorType typeOf(Value v) {
    return v.getType().cast<RankedTensorType>();
  }
  /// Brings `v` to `to` with collectives (cached per value and layout).
  Value relayout(Value v, DistAttr to);
  llvm::Error visit(mlir::Operation *op);

  mlir::OpBuilder b;
  const LayoutChoice &choice;
  SegmentTable &segments;
  unsigned numAxes;
  mlir::IRMapping map;
  llvm::DenseMap<std::pair<Value, mlir::Attribute>, Value> relayouts;
};

} // namespace

Value Builder::relayout(Value v, DistAttr to) {
  DistAttr cur = distOf(v);
  if (cur == to)
    return v;
  auto key = std::make_pair(v, mlir::Attribute(to));
  if (auto it = relayouts.find(key); it != relayouts.end())
    return it->second;
  mlir::Location loc = v.getLoc();
  Value x = v;
  // Partial sums first, then splits that change, then new splits.
  // Partial sums are added up inside nodes first (the innermost axis).
  for (unsigned a = numAxes; a-- > 0;)
    if (cur.getAxes()[a].isPartial() && cur.getAxes()[a] != to.getAxes()[a]) {
      cur = cur.with(a, AxisDist::identity());
      x = b.create<AllReduceOp>(loc, x.getType(), x, a, cur, "ring");
    }
  for (unsigned a = 0; a < numAxes; ++a) {
    AxisDist from = cur.getAxes()[a], want = to.getAxes()[a];
    if (!from.isGather() || from == want)
      continue;
    bool otherSplitsDim = false;
    for (unsigned o = 0; o < numAxes; ++o)
      otherSplitsDim |= o != a && want.isGather() &&
                        cur.getAxes()[o].isGather() &&
                        cur.getAxes()[o].dim == want.dim &&
                        cur.getAxes()[o].segment != want.segment;
    if (want.isGather() && want.dim != from.dim && !otherSplitsDim) {
      cur = cur.with(a, want);
      x = b.create<AllToAllOp>(loc, x.getType(), x, a, cur);
      continue;
    }
    cur = cur.with(a, AxisDist::identity());
    x = b.create<AllGatherOp>(loc, x.getType(), x, a, cur, "padded");
  }
  for (unsigned a = 0; a < numAxes; ++a)
    if (cur.getAxes()[a].isIdentity() && to.getAxes()[a].isGather()) {
      cur = cur.with(a, to.getAxes()[a]);
      x = b.create<ShardOp>(loc, x.getType(), x, a, cur);
    }
  relayouts[key] = x;
  return x;
}

llvm::Error Builder::visit(mlir::Operation *op) {
  mlir::Location loc = op->getLoc();
  if (auto p = llvm::dyn_cast<graph::ParameterOp>(op)) {
    DistAttr d = choice.parameters.lookup(p.getName());
    Value v = b.create<ParameterOp>(loc, p.getType(), p.getName(), "replicated",
                                    d ? d : replicated());
    map.map(p.getResult(), v);
    return llvm::Error::success();
  }
  if (auto buf = llvm::dyn_cast<graph::BufferOp>(op)) {
    Value v = b.create<ParameterOp>(loc, buf.getType(), buf.getName(), "buffer",
                                    replicated());
    map.map(buf.getResult(), v);
    return llvm::Error::success();
  }
  if (llvm::isa<graph::ConstantOp>(op)) {
    b.clone(*op, map);
    return llvm::Error::success();
  }
  if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
    llvm::SmallVector<Value> values;
    for (Value v : ret.getOperands()) {
      DistAttr d = distOf(map.lookup(v));
      llvm::SmallVector<AxisDist> whole(d.getAxes());
      for (AxisDist &e : whole)
        if (e.isPartial())
          e = AxisDist::identity();
      values.push_back(
          relayout(map.lookup(v), DistAttr::get(b.getContext(), whole)));
    }
    b.create<mlir::func::ReturnOp>(loc, values);
    return llvm::Error::success();
  }
  if (op->getNumRegions() || op->getDialect()->getNamespace() != "graph")
    return badInput("the baseline builder cannot place '{0}'",
                    op->getName().getStringRef().str());

  DimMap dims = mapDims(op);
  llvm::SmallVector<DistAttr> current;
  for (Value v : op->getOperands()) {
    DistAttr d = distOf(map.lookup(v));
    // Partial sums are added up before any use.
    llvm::SmallVector<AxisDist> axes(d.getAxes());
    for (AxisDist &e : axes)
      if (e.isPartial())
        e = AxisDist::identity();
    current.push_back(DistAttr::get(b.getContext(), axes));
  }
  bool floatResults = llvm::all_of(op->getResultTypes(), [](mlir::Type t) {
    return t.cast<RankedTensorType>().getElementType().isa<mlir::FloatType>();
  });
  // Per axis, the first operand split that the op keeps wins.
  llvm::SmallVector<std::optional<AxisChoice>> chosen(numAxes);
  for (unsigned a = 0; a < numAxes; ++a)
    for (auto [o, d] : llvm::enumerate(current)) {
      AxisDist e = d.getAxes()[a];
      if (!e.isGather() || chosen[a])
        continue;
      DimTarget t = dims[o][e.dim];
      if (t.kind == DimTarget::Whole ||
          (t.kind == DimTarget::Contract && !floatResults))
        continue;
      AxisChoice c{t, e.segment, e.segment};
      if (t.kind == DimTarget::Result && (t.num != 1 || t.den != 1)) {
        if (t.num == t.den)
          c.outSegment = e.segment;
        else
          c.outSegment = segments.derive(e.segment, t.num, t.den);
        if (c.outSegment < 0)
          continue;
      }
      // Two axes splitting one result dim must share the segment.
      bool clash = false;
      for (unsigned p = 0; p < a; ++p)
        clash |= chosen[p] && chosen[p]->target.kind == DimTarget::Result &&
                 t.kind == DimTarget::Result &&
                 chosen[p]->target.dim == t.dim &&
                 chosen[p]->outSegment != c.outSegment;
      if (!clash)
        chosen[a] = c;
    }
  // Operands follow the choice: each dim that maps where the winner does is
  // split the same way, everything else is whole.
  llvm::SmallVector<Value> inputs;
  for (auto [o, v] : llvm::enumerate(op->getOperands())) {
    llvm::SmallVector<AxisDist> axes(numAxes, AxisDist::identity());
    for (unsigned a = 0; a < numAxes; ++a) {
      if (!chosen[a])
        continue;
      for (auto [j, t] : llvm::enumerate(dims[o]))
        if (t.sameAs(chosen[a]->target) && t.kind != DimTarget::Whole &&
            typeOf(v).getDimSize(j) == segments.extentOf(chosen[a]->inSegment))
          axes[a] = AxisDist::gather(j, chosen[a]->inSegment);
    }
    inputs.push_back(
        relayout(map.lookup(v), DistAttr::get(b.getContext(), axes)));
  }
  llvm::SmallVector<mlir::Attribute> dists;
  bool partial = false, split = false;
  for (Value r : op->getResults()) {
    llvm::SmallVector<AxisDist> axes(numAxes, AxisDist::identity());
    for (unsigned a = 0; a < numAxes; ++a) {
      if (!chosen[a])
        continue;
      if (chosen[a]->target.kind == DimTarget::Contract) {
        axes[a] = AxisDist::sum();
        partial = true;
      } else if (chosen[a]->target.dim < typeOf(r).getRank()) {
        axes[a] =
            AxisDist::gather(chosen[a]->target.dim, chosen[a]->outSegment);
        split = true;
      }
    }
    dists.push_back(DistAttr::get(b.getContext(), axes));
  }
  std::string variant = (op->getName().stripDialect() + "." +
                         (partial ? "split-contraction"
                          : split ? "split"
                                  : "replicated"))
                            .str();
  auto local = b.create<LocalOp>(loc, op->getResultTypes(), inputs, variant,
                                 b.getArrayAttr(dists));
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<mlir::Location> argLocs;
  for (Value v : op->getOperands()) {
    argTypes.push_back(v.getType());
    argLocs.push_back(loc);
  }
  mlir::OpBuilder::InsertionGuard guard(b);
  mlir::Block *body = b.createBlock(&local.getBody(), {}, argTypes, argLocs);
  mlir::IRMapping inner;
  for (auto [from, to] : llvm::zip(op->getOperands(), body->getArguments()))
    inner.map(from, to);
  mlir::Operation *clone = b.clone(*op, inner);
  b.create<YieldOp>(loc, clone->getResults());
  for (auto [from, to] : llvm::zip(op->getResults(), local.getResults()))
    map.map(from, to);
  return llvm::Error::success();
}

llvm::Error Builder::run(mlir::func::FuncOp source, mlir::func::FuncOp target) {
  mlir::Block *entry = target.addEntryBlock();
  for (auto [i, arg] : llvm::enumerate(source.getArguments())) {
    map.map(arg, entry->getArgument(i));
    if (i < choice.arguments.size() && choice.arguments[i])
      target.setArgAttr(i, SpmdDialect::kDistAttr, choice.arguments[i]);
  }
  b.setInsertionPointToEnd(entry);
  for (mlir::Operation &op : source.getBody().front())
    if (auto err = visit(&op))
      return err;
  return llvm::Error::success();
}

llvm::Error baselines::buildPlanBody(mlir::func::FuncOp source,
                                     mlir::func::FuncOp target,
                                     const LayoutChoice &choice,
                                     SegmentTable &segments) {
  Builder builder(target, choice, segments);
  return builder.run(source, target);
}
