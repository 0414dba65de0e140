//===- SpmdOps.cpp - Verifiers of the spmd dialect ------------------------===//

#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace weft::spmd;

//===----------------------------------------------------------------------===//
// Distributions in context
//===----------------------------------------------------------------------===//

MeshAttr weft::spmd::getMesh(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto mesh = p->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr))
      return mesh;
  return {};
}

SegmentAttr weft::spmd::lookupSegment(Operation *op, int64_t id) {
  for (Operation *p = op; p; p = p->getParentOp()) {
    auto segments = p->getAttrOfType<ArrayAttr>(SpmdDialect::kSegmentsAttr);
    if (!segments)
      continue;
    for (Attribute a : segments)
      if (auto seg = a.dyn_cast<SegmentAttr>(); seg && seg.getId() == id)
        return seg;
  }
  return {};
}

DistAttr weft::spmd::getDist(Value value) {
  if (auto arg = value.dyn_cast<BlockArgument>()) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto func = dyn_cast_or_null<func::FuncOp>(owner))
      if (auto d = func.getArgAttrOfType<DistAttr>(arg.getArgNumber(),
                                                   SpmdDialect::kDistAttr))
        return d;
  } else if (Operation *def = value.getDefiningOp()) {
    if (auto d = def->getAttrOfType<DistAttr>("dist"))
      return d;
    // A local not yet verified may lack its dists (verifiers of its users
    // can run first): no distribution then.
    if (auto local = dyn_cast<LocalOp>(def)) {
      auto dists = local->getAttrOfType<ArrayAttr>("dists");
      unsigned r = value.cast<OpResult>().getResultNumber();
      return dists && r < dists.size() ? dists[r].dyn_cast<DistAttr>()
                                       : DistAttr();
    }
  }
  Operation *scope =
      value.getParentBlock() ? value.getParentBlock()->getParentOp() : nullptr;
  MeshAttr mesh = scope ? getMesh(scope) : MeshAttr();
  if (!mesh)
    return {};
  return DistAttr::replicated(value.getContext(), mesh.getNumAxes());
}

LogicalResult weft::spmd::verifyDist(Operation *op, Type type, DistAttr dist,
                                     StringRef what) {
  MeshAttr mesh = getMesh(op);
  if (!mesh)
    return op->emitOpError("needs a mesh: put 'spmd.mesh' on the module");
  ArrayRef<AxisDist> axes = dist.getAxes();
  if (axes.size() != mesh.getNumAxes())
    return op->emitOpError()
           << what << ": distribution has " << axes.size()
           << " entries, the mesh has " << mesh.getNumAxes() << " axes";
  auto tensor = type.cast<RankedTensorType>();
  for (auto [axis, d] : llvm::enumerate(axes)) {
    if (d.isPartial() && !tensor.getElementType().isa<FloatType>())
      return op->emitOpError() << what << ": a partial (" << str(d)
                               << ") value must be floating point";
    if (!d.isGather())
      continue;
    if (d.dim < 0 || d.dim >= tensor.getRank())
      return op->emitOpError()
             << what << ": " << str(d) << " splits dim " << d.dim
             << " of a rank-" << tensor.getRank() << " tensor";
    SegmentAttr seg = lookupSegment(op, d.segment);
    if (!seg)
      return op->emitOpError()
             << what << ": " << str(d) << " names segment " << d.segment
             << ", which the module does not define";
    if (seg.getExtent() != tensor.getDimSize(d.dim))
      return op->emitOpError()
             << what << ": segment " << d.segment << " has extent "
             << seg.getExtent() << " but dim " << d.dim << " has size "
             << tensor.getDimSize(d.dim);
    for (size_t other = 0; other < axis; ++other)
      if (axes[other].isGather() && axes[other].dim == d.dim &&
          axes[other].segment != d.segment)
        return op->emitOpError()
               << what << ": axes " << other << " and " << axis << " split dim "
               << d.dim << " with different segments";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  ParamStrategy s = getStrategy();
  if (failed(verifyDist(*this, getType(), getDist(), "result")))
    return failure();
  ArrayRef<AxisDist> axes = getDist().getAxes();
  if (llvm::any_of(axes, [](const AxisDist &d) { return d.isPartial(); }))
    return emitOpError("a parameter cannot be stored as a partial value");
  bool split =
      llvm::any_of(axes, [](const AxisDist &d) { return d.isGather(); });
  bool whole =
      llvm::any_of(axes, [](const AxisDist &d) { return d.isIdentity(); });
  if (s == ParamStrategy::Zero3 && !split)
    return emitOpError("zero3 stores the parameter sharded: its distribution "
                       "needs a gather entry");
  if ((s == ParamStrategy::Zero1 || s == ParamStrategy::Zero2) && !whole)
    return emitOpError() << stringifyParamStrategy(s)
                         << " shards the optimizer state over a whole "
                            "(id) axis: the distribution has none";
  return success();
}

/// Checks a relayout op: the input's entry at `axis` satisfies `from`, the
/// result's entry satisfies `to`, and every other entry is unchanged.
template <typename OpTy>
static LogicalResult
verifyRelayout(OpTy op, llvm::function_ref<bool(const AxisDist &)> from,
               llvm::function_ref<bool(const AxisDist &)> to,
               StringRef expected) {
  if (failed(verifyDist(op, op.getType(), op.getDist(), "result")))
    return failure();
  DistAttr in = getDist(op.getInput());
  if (!in)
    return op.emitOpError("input has no distribution");
  ArrayRef<AxisDist> before = in.getAxes(), after = op.getDist().getAxes();
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= int64_t(after.size()))
    return op.emitOpError() << "axis " << axis << " is not a mesh axis (0.."
                            << after.size() - 1 << ")";
  if (before.size() != after.size())
    return op.emitOpError("input and result distributions differ in length");
  if (!from(before[axis]) || !to(after[axis]))
    return op.emitOpError()
           << "expected " << expected << " on axis " << axis << ", found "
           << str(before[axis]) << " -> " << str(after[axis]);
  for (size_t a = 0; a < after.size(); ++a)
    if (int64_t(a) != axis && before[a] != after[a])
      return op.emitOpError()
             << "changes axis " << a << " (" << str(before[a]) << " -> "
             << str(after[a]) << "); only axis " << axis << " may change";
  return success();
}

static bool isId(const AxisDist &d) { return d.isIdentity(); }
static bool isGather(const AxisDist &d) { return d.isGather(); }
static bool isSum(const AxisDist &d) { return d.kind == AxisDist::Kind::Sum; }
static bool isPartial(const AxisDist &d) { return d.isPartial(); }

LogicalResult ShardOp::verify() {
  return verifyRelayout(*this, isId, isGather, "id -> gather");
}

LogicalResult AllGatherOp::verify() {
  return verifyRelayout(*this, isGather, isId, "gather -> id");
}

LogicalResult ReduceScatterOp::verify() {
  return verifyRelayout(*this, isSum, isGather, "sum -> gather");
}

LogicalResult AllReduceOp::verify() {
  return verifyRelayout(*this, isPartial, isId, "sum/max -> id");
}

LogicalResult AllToAllOp::verify() {
  if (failed(verifyRelayout(*this, isGather, isGather, "gather -> gather")))
    return failure();
  AxisDist before = weft::spmd::getDist(getInput()).getAxes()[getAxis()];
  AxisDist after = getDist().getAxes()[getAxis()];
  if (before.dim == after.dim)
    return emitOpError() << "re-splits dim " << before.dim
                         << " onto itself; an all_to_all changes the dim";
  return success();
}

LogicalResult SendOp::verify() {
  if (int64_t(getPeer()) < 0)
    return emitOpError("peer stage must be >= 0");
  return success();
}

LogicalResult RecvOp::verify() {
  if (int64_t(getPeer()) < 0)
    return emitOpError("peer stage must be >= 0");
  return verifyDist(*this, getType(), getDist(), "result");
}

LogicalResult LocalOp::verify() {
  if (getDists().size() != getNumResults())
    return emitOpError() << "has " << getNumResults() << " results but "
                         << getDists().size() << " distributions";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getResults(), getDists()))) {
    auto dist = std::get<1>(pair).dyn_cast<DistAttr>();
    if (!dist)
      return emitOpError() << "dists[" << i << "] is not a #spmd.dist";
    if (failed(verifyDist(*this, std::get<0>(pair).getType(), dist,
                          "result #" + std::to_string(i))))
      return failure();
  }
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "region has " << body.getNumArguments()
                         << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError() << "region argument type " << arg.getType()
                           << " differs from input type " << in.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("region must end in spmd.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("spmd.yield types differ from the result types");
  return success();
}

#define GET_OP_CLASSES
#include "Spmd/IR/SpmdOps.cpp.inc"
