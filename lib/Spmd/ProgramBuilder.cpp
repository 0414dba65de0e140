//===- ProgramBuilder.cpp - An spmd program from per-op rule variants -----===//

#include "weft/Spmd/ProgramBuilder.h"
#include "Graph/IR/GraphOps.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "weft/Spmd/Relayout.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace weft;
using namespace weft::spmd;
using mlir::RankedTensorType;
using mlir::Value;

std::string weft::modelFingerprint(mlir::ModuleOp graph) {
  // The gradient bucket size (weftc --bucket-mb) is how the plan runs, not
  // what the model computes: it stays out of the fingerprint, so weft-run
  // recognises the model without the flag.
  mlir::Attribute bucket = graph->getAttr(SpmdDialect::kGradientBucketAttr);
  if (bucket)
    graph->removeAttr(SpmdDialect::kGradientBucketAttr);
  std::string text;
  llvm::raw_string_ostream os(text);
  graph->print(os);
  if (bucket)
    graph->setAttr(SpmdDialect::kGradientBucketAttr, bucket);
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(text.data()),
                                text.size());
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(bytes);
  return "sha256:" + llvm::toHex(hash, /*LowerCase=*/true);
}

/// `#spmd.dist<[...]>` as printed.
static std::string printDist(DistAttr d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  mlir::Attribute(d).print(os);
  return s;
}

static bool isLeaf(mlir::Operation *op) {
  return llvm::isa<graph::ParameterOp, graph::BufferOp>(op);
}

std::vector<mlir::Operation *> spmd::planOps(mlir::func::FuncOp main) {
  std::vector<mlir::Operation *> ops;
  for (mlir::Operation &op : main.getBody().front())
    if (!isLeaf(&op) && !op.hasTrait<mlir::OpTrait::IsTerminator>())
      ops.push_back(&op);
  return ops;
}

llvm::SmallVector<graph::ShardingVariant, 8>
spmd::shardingVariantsOf(mlir::Operation *op) {
  llvm::SmallVector<graph::ShardingVariant, 8> variants;
  if (auto rules = llvm::dyn_cast<graph::ShardingRuleOpInterface>(op))
    rules.getShardingVariants(variants);
  return variants;
}

std::string spmd::variantString(const OpChoice &choice) {
  std::string out;
  for (const graph::ShardingVariant &v : choice.variants)
    out += (out.empty() ? "" : ", ") + v.name;
  return out;
}

static bool sameLayouts(const graph::ShardingVariant &a,
                        const graph::ShardingVariant &b) {
  return a.name == b.name && a.operands == b.operands && a.results == b.results;
}

static std::string opName(mlir::Operation *op) {
  return op->getName().getStringRef().str();
}

llvm::Expected<OpDists> spmd::deriveDists(mlir::Operation *op,
                                          const OpChoice &choice,
                                          SegmentTable &segments) {
  mlir::MLIRContext *ctx = op->getContext();
  unsigned numAxes = segments.mesh().axisSizes.size();
  if (choice.variants.size() != numAxes)
    return badInput("{0}: {1} variant(s) for a {2}-axis mesh", opName(op),
                    choice.variants.size(), numAxes);
  auto known = shardingVariantsOf(op);
  unsigned numOperands = op->getNumOperands(), numResults = op->getNumResults();
  llvm::SmallVector<llvm::SmallVector<AxisDist, 4>, 4> operands(
      numOperands, llvm::SmallVector<AxisDist, 4>(numAxes));
  llvm::SmallVector<llvm::SmallVector<AxisDist, 4>, 2> results(
      numResults, llvm::SmallVector<AxisDist, 4>(numAxes));
  for (unsigned a = 0; a < numAxes; ++a) {
    const graph::ShardingVariant &v = choice.variants[a];
    if (!llvm::any_of(known, [&](const graph::ShardingVariant &k) {
          return sameLayouts(k, v);
        }))
      return badInput("{0}: '{1}' (axis {2}) is not one of its sharding "
                      "variants",
                      opName(op), v.name, a);
    if (v.operands.size() != numOperands || v.results.size() != numResults)
      return badInput("{0}: variant '{1}' lists {2} operand(s) and {3} "
                      "result(s), the op has {4} and {5}",
                      opName(op), v.name, v.operands.size(), v.results.size(),
                      numOperands, numResults);
    int64_t seg = a < choice.segments.size() ? choice.segments[a] : -1;
    int64_t unit = 0;
    auto entry = [&](const graph::AxisLayout &l,
                     Value value) -> llvm::Expected<AxisDist> {
      if (l.isIdentity())
        return AxisDist::identity();
      if (l.isReduce())
        return l.combiner == graph::Combiner::Max ? AxisDist::max()
                                                  : AxisDist::sum();
      auto type = value.getType().cast<RankedTensorType>();
      if (l.dim < 0 || l.dim >= type.getRank())
        return badInput("{0}: variant '{1}' splits dim {2} of a rank-{3} "
                        "tensor",
                        opName(op), v.name, l.dim, type.getRank());
      int64_t extent = type.getDimSize(l.dim);
      if (seg < 0 || seg >= int64_t(segments.size()))
        return badInput("{0}: variant '{1}' (axis {2}) needs a segment",
                        opName(op), v.name, a);
      if (unit == 0) {
        if (segments.extentOf(seg) != extent)
          return badInput("{0}: segment {1} has extent {2}, the split dim "
                          "of '{3}' (axis {4}) has {5}",
                          opName(op), seg, segments.extentOf(seg), v.name, a,
                          extent);
        unit = l.align;
      }
      int64_t s = segments.scaled(seg, unit, extent, l.align);
      if (s < 0)
        return badInput("{0}: segment {1} does not fit the split of dim {2} "
                        "(extent {3}, align {4}) of '{5}' (axis {6})",
                        opName(op), seg, l.dim, extent, l.align, v.name, a);
      return AxisDist::gather(l.dim, s);
    };
    for (unsigned i = 0; i < numOperands; ++i) {
      auto e = entry(v.operands[i], op->getOperand(i));
      if (!e)
        return e.takeError();
      operands[i][a] = *e;
    }
    for (unsigned i = 0; i < numResults; ++i) {
      auto e = entry(v.results[i], op->getResult(i));
      if (!e)
        return e.takeError();
      results[i][a] = *e;
    }
  }
  OpDists out;
  for (auto [i, axes] : llvm::enumerate(operands)) {
    out.operands.push_back(DistAttr::get(ctx, axes));
    if (!isStructurallyValid(out.operands.back()))
      return badInput("{0}: two axes split one dim of operand {1} with "
                      "different segments",
                      opName(op), i);
  }
  for (auto [i, axes] : llvm::enumerate(results)) {
    out.results.push_back(DistAttr::get(ctx, axes));
    if (!isStructurallyValid(out.results.back()))
      return badInput("{0}: two axes split one dim of result {1} with "
                      "different segments",
                      opName(op), i);
  }
  return out;
}

namespace {

class Builder {
public:
  Builder(mlir::ModuleOp graph, PlanChoice &choice, const OpChooser *chooser)
      : graph(graph), choice(choice), chooser(chooser), b(graph.getContext()) {}

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> run();

private:
  DistAttr replicated() {
    return DistAttr::replicated(b.getContext(), numAxes);
  }
  llvm::Error checkDist(DistAttr d, mlir::Type type, llvm::StringRef what);
  llvm::Expected<Value> relayout(Value v, DistAttr to, llvm::StringRef what);
  llvm::Error visit(mlir::Operation *op);
  /// Drops the segments no distribution names (candidates a chooser made
  /// and did not use), renumbering the rest in order, in the plan and in
  /// `choice`.
  void compactSegments(mlir::ModuleOp plan);

  mlir::ModuleOp graph;
  PlanChoice &choice;
  const OpChooser *chooser;
  mlir::OpBuilder b;
  unsigned numAxes = 0;
  std::unique_ptr<SegmentTable> segments;
  mlir::IRMapping map;
  llvm::DenseMap<Value, DistAttr> dists;
  llvm::DenseMap<std::pair<Value, mlir::Attribute>, Value> relayouts;
  size_t nextOp = 0;
};

} // namespace

llvm::Error Builder::checkDist(DistAttr d, mlir::Type type,
                               llvm::StringRef what) {
  auto tensor = type.dyn_cast<RankedTensorType>();
  if (d.getAxes().size() != numAxes)
    return badInput("{0}: distribution has {1} entries, the mesh has {2} "
                    "axes",
                    what.str(), d.getAxes().size(), numAxes);
  if (!isStructurallyValid(d))
    return badInput("{0}: two axes split one dim with different segments",
                    what.str());
  for (const AxisDist &e : d.getAxes()) {
    if (e.isPartial())
      return badInput("{0}: a partial distribution", what.str());
    if (!e.isGather())
      continue;
    if (!tensor || e.dim < 0 || e.dim >= tensor.getRank())
      return badInput("{0}: {1} is out of range", what.str(), str(e));
    if (e.segment < 0 || e.segment >= int64_t(segments->size()) ||
        segments->extentOf(e.segment) != tensor.getDimSize(e.dim))
      return badInput("{0}: {1} names no segment of extent {2}", what.str(),
                      str(e), tensor.getDimSize(e.dim));
  }
  return llvm::Error::success();
}

llvm::Expected<Value> Builder::relayout(Value v, DistAttr to,
                                        llvm::StringRef what) {
  DistAttr cur = dists.lookup(v);
  if (cur == to)
    return v;
  auto key = std::make_pair(v, mlir::Attribute(to));
  if (auto it = relayouts.find(key); it != relayouts.end())
    return it->second;
  std::string why;
  auto steps = planRelayout(cur, to, &why);
  if (mlir::failed(steps))
    return badInput("{0}: no relayout from {1} to {2}: {3}", what.str(),
                    printDist(cur), printDist(to), why);
  Value x = emitRelayout(b, v.getLoc(), v, *steps);
  dists[x] = to;
  relayouts[key] = x;
  return x;
}

llvm::Error Builder::visit(mlir::Operation *op) {
  mlir::Location loc = op->getLoc();
  if (auto p = llvm::dyn_cast<graph::ParameterOp>(op)) {
    auto it = choice.parameters.find(p.getName());
    ParameterChoice pc =
        it == choice.parameters.end() ? ParameterChoice() : it->second;
    DistAttr d = pc.dist ? pc.dist : replicated();
    if (auto err = checkDist(d, p.getType(),
                             ("parameter '" + p.getName() + "'").str()))
      return err;
    Value v =
        b.create<ParameterOp>(loc, p.getType(), p.getName(), pc.strategy, d);
    map.map(p.getResult(), v);
    dists[v] = d;
    return llvm::Error::success();
  }
  if (auto buf = llvm::dyn_cast<graph::BufferOp>(op)) {
    auto it = choice.parameters.find(buf.getName());
    DistAttr d = it != choice.parameters.end() && it->second.dist
                     ? it->second.dist
                     : replicated();
    if (auto err = checkDist(d, buf.getType(),
                             ("buffer '" + buf.getName() + "'").str()))
      return err;
    Value v = b.create<ParameterOp>(loc, buf.getType(), buf.getName(),
                                    ParamStrategy::Buffer, d);
    map.map(buf.getResult(), v);
    dists[v] = d;
    return llvm::Error::success();
  }
  if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
    llvm::SmallVector<Value> values;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto x = relayout(map.lookup(v), replicated(),
                        "returned value " + std::to_string(i));
      if (!x)
        return x.takeError();
      values.push_back(*x);
    }
    b.create<mlir::func::ReturnOp>(loc, values);
    return llvm::Error::success();
  }
  if (op->getNumRegions() || !op->getDialect() ||
      op->getDialect()->getNamespace() != "graph")
    return badInput("cannot place '{0}' in a plan", opName(op));

  size_t index = nextOp++;
  std::string what = llvm::formatv("op #{0} ({1})", index, opName(op)).str();
  llvm::SmallVector<DistAttr, 4> current;
  for (Value v : op->getOperands())
    current.push_back(dists.lookup(map.lookup(v)));
  OpChoice opChoice;
  if (chooser) {
    auto c = (*chooser)(op, current, *segments);
    if (!c)
      return c.takeError();
    opChoice = std::move(*c);
    choice.ops.push_back(opChoice);
  } else {
    if (index >= choice.ops.size())
      return badInput("the plan chooses {0} op(s), the program has more",
                      choice.ops.size());
    opChoice = choice.ops[index];
  }
  auto derived = deriveDists(op, opChoice, *segments);
  if (!derived)
    return makeError(ExitBadInput, "{0}: {1}", what,
                     llvm::toString(derived.takeError()));
  llvm::SmallVector<Value> inputs;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    auto x = relayout(map.lookup(v), derived->operands[i],
                      what + " operand " + std::to_string(i));
    if (!x)
      return x.takeError();
    inputs.push_back(*x);
  }
  llvm::SmallVector<mlir::Attribute> resultDists(derived->results.begin(),
                                                 derived->results.end());
  bool offset =
      llvm::any_of(opChoice.variants, [](const graph::ShardingVariant &v) {
        return v.needsGlobalOffset;
      });
  auto local = b.create<LocalOp>(
      loc, op->getResultTypes(), inputs, variantString(opChoice),
      b.getArrayAttr(resultDists), offset, opChoice.recompute);
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<mlir::Location> argLocs;
  for (Value v : op->getOperands()) {
    argTypes.push_back(v.getType());
    argLocs.push_back(loc);
  }
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    mlir::Block *body = b.createBlock(&local.getBody(), {}, argTypes, argLocs);
    mlir::IRMapping inner;
    for (auto [from, to] : llvm::zip(op->getOperands(), body->getArguments()))
      inner.map(from, to);
    mlir::Operation *clone = b.clone(*op, inner);
    // An op reading one value twice (mul %x, %x) has one mapping for both
    // operands; each operand is its own block argument, with its own layout.
    for (auto [i, arg] : llvm::enumerate(body->getArguments()))
      clone->setOperand(i, arg);
    b.create<YieldOp>(loc, clone->getResults());
  }
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    map.map(r, local.getResult(i));
    dists[local.getResult(i)] = derived->results[i];
  }
  return llvm::Error::success();
}

void Builder::compactSegments(mlir::ModuleOp plan) {
  mlir::MLIRContext *ctx = plan.getContext();
  llvm::SmallVector<bool> used(segments->size(), false);
  auto note = [&](DistAttr d) {
    if (d)
      for (const AxisDist &e : d.getAxes())
        if (e.isGather())
          used[e.segment] = true;
  };
  auto forEachDist = [&](mlir::Operation *op, auto &&fn) {
    if (auto d = op->getAttrOfType<DistAttr>(SpmdDialect::kDistAttr))
      fn(d);
    if (auto d = op->getAttrOfType<DistAttr>("dist"))
      fn(d);
    if (auto ds = op->getAttrOfType<mlir::ArrayAttr>("dists"))
      for (mlir::Attribute a : ds)
        fn(a.dyn_cast<DistAttr>());
  };
  plan.walk([&](mlir::Operation *op) {
    forEachDist(op, note);
    if (auto f = llvm::dyn_cast<mlir::func::FuncOp>(op))
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        note(f.getArgAttrOfType<DistAttr>(i, SpmdDialect::kDistAttr));
  });
  llvm::SmallVector<int64_t> newId(segments->size(), -1);
  std::vector<SegmentAttr> kept;
  for (size_t i = 0; i < used.size(); ++i)
    if (used[i]) {
      SegmentAttr s = segments->at(i);
      newId[i] = kept.size();
      kept.push_back(SegmentAttr::get(ctx, kept.size(), s.getExtent(),
                                      s.getRatios(), s.getSizes(),
                                      s.getAlign()));
    }
  auto remap = [&](DistAttr d) -> DistAttr {
    if (!d)
      return d;
    llvm::SmallVector<AxisDist, 4> axes(d.getAxes());
    for (AxisDist &e : axes)
      if (e.isGather())
        e.segment = newId[e.segment];
    return DistAttr::get(ctx, axes);
  };
  plan.walk([&](mlir::Operation *op) {
    if (auto d = op->getAttrOfType<DistAttr>("dist"))
      op->setAttr("dist", remap(d));
    if (auto ds = op->getAttrOfType<mlir::ArrayAttr>("dists")) {
      llvm::SmallVector<mlir::Attribute> out;
      for (mlir::Attribute a : ds)
        out.push_back(remap(a.cast<DistAttr>()));
      op->setAttr("dists", mlir::ArrayAttr::get(ctx, out));
    }
    if (auto f = llvm::dyn_cast<mlir::func::FuncOp>(op))
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (auto d = f.getArgAttrOfType<DistAttr>(i, SpmdDialect::kDistAttr))
          f.setArgAttr(i, SpmdDialect::kDistAttr, remap(d));
  });
  for (DistAttr &d : choice.arguments)
    d = remap(d);
  for (auto &entry : choice.parameters)
    entry.second.dist = remap(entry.second.dist);
  for (OpChoice &op : choice.ops)
    for (int64_t &s : op.segments)
      if (s >= 0 && s < int64_t(newId.size()))
        s = newId[s];
  choice.segments = std::move(kept);
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> Builder::run() {
  mlir::MLIRContext *ctx = graph.getContext();
  ctx->getOrLoadDialect<SpmdDialect>();
  auto main = graph.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal())
    return badInput("the model has no @main function");
  if (!choice.mesh)
    return badInput("the plan has no mesh");
  numAxes = choice.mesh.getNumAxes();
  MeshShape shape = MeshShape::of(choice.mesh);
  for (auto [i, s] : llvm::enumerate(choice.segments)) {
    if (!s || s.getId() != int64_t(i))
      return badInput("segment {0} has id {1}", i, s ? s.getId() : -1);
    if (!s.getSizes() || s.getSizes().size() != int64_t(shape.numDevices()))
      return badInput("segment {0} needs {1} integer sizes", i,
                      shape.numDevices());
  }
  segments = std::make_unique<SegmentTable>(ctx, shape, choice.segments);
  if (choice.arguments.size() > main.getNumArguments())
    return badInput("{0} argument distributions for {1} arguments",
                    choice.arguments.size(), main.getNumArguments());
  if (!chooser && choice.ops.size() != planOps(main).size())
    return badInput("the plan chooses {0} op(s), the program has {1}",
                    choice.ops.size(), planOps(main).size());

  mlir::OwningOpRef<mlir::ModuleOp> plan =
      mlir::ModuleOp::create(graph.getLoc());
  plan->getOperation()->setAttr(SpmdDialect::kMeshAttr, choice.mesh);
  plan->getOperation()->setAttr(SpmdDialect::kFingerprintAttr,
                                b.getStringAttr(modelFingerprint(graph)));
  plan->getOperation()->setAttr(
      SpmdDialect::kVersionAttr,
      b.getI64IntegerAttr(SpmdDialect::kFormatVersion));
  // Gradient accumulation: the graph is one micro-batch of a step.
  if (auto micro = graph->getAttr(SpmdDialect::kMicroBatchesAttr))
    plan->getOperation()->setAttr(SpmdDialect::kMicroBatchesAttr, micro);
  if (auto bucket = graph->getAttr(SpmdDialect::kGradientBucketAttr))
    plan->getOperation()->setAttr(SpmdDialect::kGradientBucketAttr, bucket);
  b.setInsertionPointToEnd(plan->getBody());
  auto func = b.create<mlir::func::FuncOp>(main.getLoc(), "main",
                                           main.getFunctionType());
  mlir::Block *entry = func.addEntryBlock();
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    Value target = entry->getArgument(i);
    map.map(arg, target);
    DistAttr d = i < choice.arguments.size() && choice.arguments[i]
                     ? choice.arguments[i]
                     : replicated();
    if (auto err = checkDist(d, arg.getType(), "argument " + std::to_string(i)))
      return std::move(err);
    dists[target] = d;
    func.setArgAttr(i, SpmdDialect::kDistAttr, d);
  }
  b.setInsertionPointToEnd(entry);
  for (mlir::Operation &op : main.getBody().front())
    if (auto err = visit(&op))
      return std::move(err);

  compactSegments(*plan);
  llvm::SmallVector<mlir::Attribute> all(choice.segments.begin(),
                                         choice.segments.end());
  plan->getOperation()->setAttr(SpmdDialect::kSegmentsAttr,
                                b.getArrayAttr(all));
  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
      if (diagnostics.empty())
        diagnostics = d.str();
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*plan)))
      return badInput("the plan does not verify: {0}", diagnostics);
  }
  return std::move(plan);
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
spmd::buildProgram(mlir::ModuleOp graph, const PlanChoice &choice) {
  PlanChoice copy = choice;
  Builder builder(graph, copy, nullptr);
  return builder.run();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
spmd::buildProgram(mlir::ModuleOp graph, PlanChoice &choice,
                   const OpChooser &chooser) {
  choice.ops.clear();
  Builder builder(graph, choice, &chooser);
  return builder.run();
}
