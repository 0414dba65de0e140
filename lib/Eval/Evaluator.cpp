//===- Evaluator.cpp - The one place a plan is scored ---------------------===//
//
// Walks the program's function in order: collectives and their duals,
// compute of every spmd.local at shard shapes. docs/Evaluator.md.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphInterfaces.h"
#include "Graph/IR/GraphOps.h"
#include "PlanEvaluator.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Spmd/RecipeStats.h"
#include "weft/Support/Error.h"
#include <map>

using namespace weft;
using namespace weft::eval;
using namespace weft::spmd;

void PlanEvaluator::priceAlong(Collective kind, AxisMask axes,
                               llvm::function_ref<double(unsigned)> bytesOf,
                               CollectiveVariant variant,
                               std::vector<double> &into) {
  if (layout.sizeOf(axes) <= 1 || !communicates(kind))
    return;
  std::vector<bool> done(n);
  for (unsigned d : reps) {
    if (done[d])
      continue;
    llvm::ArrayRef<unsigned> group = layout.groupOf(d, axes);
    llvm::ArrayRef<unsigned> cluster = layout.clusterGroupOf(d, axes);
    llvm::SmallVector<double> bytes;
    for (unsigned y : group)
      bytes.push_back(bytesOf(layout.representativeOf(y)));
    double t = pricer.seconds(kind, cluster, bytes, variant);
    for (unsigned y : group) {
      if (layout.representativeOf(y) == y)
        into[y] += t;
      done[y] = true;
    }
  }
}

llvm::Error PlanEvaluator::visitRelayout(Operation *op) {
  std::optional<CollectiveDual> dual = dualOf(op);
  if (!dual)
    return badInput("the evaluator does not know '{0}'",
                    op->getName().getStringRef().str());
  if (llvm::isa<SendOp, RecvOp>(op))
    return llvm::Error::success(); // Stages come with Cells (not priced).
  Value in = op->getOperand(0), res = op->getResult(0);
  DistAttr inDist = distOf(in), outDist = distOf(res);
  unsigned axis = op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
  AxisMask mask = 1u << axis;
  bool grad = needsGradient.contains(in);
  if (grad)
    needsGradient.insert(res);
  // A parameter's pending sync moves with it to its relayouts.
  if (auto it = pendingSync.find(in); it != pendingSync.end()) {
    std::vector<double> sync = std::move(it->second);
    pendingSync.erase(it);
    pendingSync[res] = std::move(sync);
    if (onceSyncValues.contains(in))
      onceSyncValues.insert(res);
  }
  bool zero3 = zero3Values.contains(in);
  if (zero3)
    zero3Values.insert(res);

  CollectiveVariant variant;
  if (auto mode = op->getAttrOfType<mlir::StringAttr>("mode"))
    variant.uneven = mode.getValue() == "grouped" ? UnevenVariant::Grouped
                                                  : UnevenVariant::Padded;
  if (auto algo = op->getAttrOfType<mlir::StringAttr>("algorithm"))
    variant.algo = algo.getValue() == "hierarchical"
                       ? AllReduceAlgo::Hierarchical
                       : AllReduceAlgo::Ring;
  auto inBytes = [&](unsigned d) { return shardBytes(in, inDist, d); };
  auto outBytes = [&](unsigned d) { return shardBytes(res, outDist, d); };
  // What each member contributes: its input shard, except a reduce-scatter
  // (the shard it ends with).
  bool byResult = dual->forward == Collective::ReduceScatter;
  auto fwdBytes = [&](unsigned d) {
    return byResult ? outBytes(d) : inBytes(d);
  };
  std::vector<double> fwdTime(n);
  priceAlong(dual->forward, mask, fwdBytes, variant, fwdTime);
  CollectiveEstimate record;
  record.op = op->getName().getStringRef().str();
  if (auto name = op->getLoc().dyn_cast<mlir::NameLoc>())
    record.location = name.getName().str();
  record.axis = axis;
  for (unsigned d : reps) {
    step.comm[d] += fwdTime[d];
    record.bytes = std::max(record.bytes, fwdBytes(d));
  }
  record.forwardSeconds = maxOf(fwdTime);
  if (grad && communicates(dual->backward)) {
    // The dual moves the gradient of the result: the same shards, in
    // reverse (an all_to_all back sends what the result holds).
    std::vector<double> dualTime(n);
    auto bwdBytes = [&](unsigned d) {
      return dual->reversesLayout ? outBytes(d) : fwdBytes(d);
    };
    priceAlong(dual->backward, mask, bwdBytes, variant, dualTime);
    // ZeRO-3: the gathered parameter is gathered again for the backward
    // pass unless the forward's copy is kept.
    if (zero3 && dual->forward == Collective::AllGather &&
        !options.keepGatheredParameters)
      priceAlong(Collective::AllGather, mask, fwdBytes, variant, dualTime);
    for (unsigned d : reps) {
      step.comm[d] += dualTime[d];
      step.dual[d] += dualTime[d];
    }
    record.dualSeconds = maxOf(dualTime);
  }
  out.collectives.push_back(std::move(record));
  for (unsigned d : reps) {
    double b = outBytes(d);
    if (zero3 && options.keepGatheredParameters &&
        dual->forward == Collective::AllGather)
      kept[d] += b;
    else
      transient[d] = std::max(transient[d], b);
  }
  return llvm::Error::success();
}

/// The shard shape of an intermediate result inside a local recipe: each
/// dim takes the shard extent of an operand dim of the same global extent at
/// the same position counted from the right (exact for elementwise and
/// broadcasting ops; the global extent otherwise).
static Shape inferShard(Value result,
                        const llvm::DenseMap<Value, Shape> &shapes) {
  auto type = result.getType().cast<RankedTensorType>();
  Shape dims(type.getShape());
  int64_t rank = type.getRank();
  for (int64_t i = 0; i < rank; ++i)
    for (Value operand : result.getDefiningOp()->getOperands()) {
      auto it = shapes.find(operand);
      auto otype = operand.getType().dyn_cast<RankedTensorType>();
      if (it == shapes.end() || !otype)
        continue;
      int64_t j = otype.getRank() - rank + i;
      if (j >= 0 && otype.getDimSize(j) == dims[i]) {
        dims[i] = it->second[j];
        break;
      }
    }
  return dims;
}

void PlanEvaluator::priceCompute(Operation *op, mlir::Region *region,
                                 bool backward) {
  // What one device's compute costs. Devices of one class whose operands
  // and results have the same shard shapes cost the same: the key is read
  // from the layout's per-device extents (MeshLayout::shardExtents), and
  // shapes are built and priced only for the first device of each key.
  struct Priced {
    double forward = 0, backward = 0, kept = 0, produced = 0;
    unsigned timed = 0, measured = 0;
  };
  auto addPriced = [&](const Priced &p, unsigned d) {
    step.forward[d] += p.forward;
    out.timedOps += p.timed * layout.orbitSize(d);
    out.measuredOps += p.measured * layout.orbitSize(d);
    if (backward) {
      step.backward[d] += p.backward;
      (recomputing ? runBytes[d] : kept[d]) += p.kept;
    }
    transient[d] = std::max(transient[d], p.produced);
  };
  struct Dim {
    const int64_t *perDevice;
    int64_t full;
  };
  llvm::SmallVector<Dim, 16> dims;
  if (region) {
    auto dimsOf = [&](Value v) {
      auto type = v.getType().cast<RankedTensorType>();
      spmd::DistAttr dist = distOf(v);
      for (unsigned i = 0; i < type.getRank(); ++i)
        dims.push_back({dist ? layout.shardExtents(dist, i) : nullptr,
                        type.getDimSize(i)});
    };
    llvm::for_each(op->getOperands(), dimsOf);
    llvm::for_each(op->getResults(), dimsOf);
  }
  std::map<std::vector<int64_t>, Priced> seen;
  std::vector<int64_t> key;
  for (unsigned d : reps) {
    const DeviceType &type = layout.typeOf(d);
    key.assign(1, int64_t(layout.meshClass(d)));
    for (const Dim &dim : dims)
      key.push_back(dim.perDevice ? dim.perDevice[d] : dim.full);
    auto [it, fresh] = seen.try_emplace(key);
    Priced &p = it->second;
    if (!fresh) {
      addPriced(p, d);
      continue;
    }
    llvm::DenseMap<Value, Shape> shapes;
    if (region) {
      Operation *yield = region->front().getTerminator();
      auto shard = [&](Value inner, Value outer) {
        shapes[inner] = layout.shardShape(
            outer.getType().cast<RankedTensorType>(), distOf(outer), d);
      };
      for (auto [arg, in] :
           llvm::zip(region->front().getArguments(), op->getOperands()))
        shard(arg, in);
      for (auto [yielded, res] :
           llvm::zip(yield->getOperands(), op->getResults()))
        shard(yielded, res);
    }
    auto shapeOf = [&](Value v) -> Shape {
      if (auto it = shapes.find(v); it != shapes.end())
        return it->second;
      auto t = v.getType().cast<RankedTensorType>();
      return Shape(t.getShape());
    };
    auto priceOne = [&](graph::CostOpInterface cop) {
      graph::ShardShapes s;
      for (Value v : cop->getOperands()) {
        graph::TensorShape t = graph::TensorShape::of(v.getType());
        t.dims = shapeOf(v);
        s.operands.push_back(t);
      }
      for (Value r : cop->getResults()) {
        if (!shapes.count(r))
          shapes[r] = inferShard(r, shapes);
        graph::TensorShape t = graph::TensorShape::of(r.getType());
        t.dims = shapes[r];
        s.results.push_back(t);
        p.produced += double(t.numElements()) *
                      elementBytes(r.getType().cast<RankedTensorType>());
      }
      OpCostTerms terms = costTermsOf(cop, s, options.dtype);
      if (terms.forward.flops == 0 && terms.forward.bytes == 0)
        return;
      OpTime fwd = opTime(type, options.dtype, terms.forward, options.profile);
      p.forward += fwd.seconds;
      ++p.timed;
      p.measured += fwd.measured;
      if (!backward)
        return;
      p.backward +=
          opTime(type, options.dtype, terms.backward, options.profile).seconds;
      // Recomputed: the forward runs again before the backward; what it
      // saves lives only while its run is recomputed.
      if (recomputing)
        p.backward += fwd.seconds;
      p.kept += terms.keptBytes;
    };
    if (region)
      region->walk([&](graph::CostOpInterface cop) { priceOne(cop); });
    else if (auto cop = llvm::dyn_cast<graph::CostOpInterface>(op))
      priceOne(cop);
    addPriced(p, d);
  }
}

void PlanEvaluator::visitLocal(LocalOp op) {
  bool grad = false;
  for (Value in : op.getInputs()) {
    consume(in);
    grad |= needsGradient.contains(in);
  }
  if (grad)
    for (Value r : op.getResults())
      if (r.getType()
              .cast<RankedTensorType>()
              .getElementType()
              .isa<mlir::FloatType>())
        needsGradient.insert(r);
  recomputing = runs.price(
      op, grad, [&] { closeRun(); },
      [&](Value in) {
        for (unsigned d : reps)
          kept[d] += shardBytes(in, distOf(in), d);
      });
  priceCompute(op, &op.getBody(), grad);
  priceRecipeStats(op, grad);
  recomputing = false;
  closeStep(("local " + op.getVariant()).str());
}

void PlanEvaluator::priceRecipeStats(LocalOp op, bool grad) {
  Operation *inner = recipeOp(op);
  if (!inner)
    return;
  for (const RecipeStat &stat :
       recipeStats(inner, op.getVariant(), layout.sizes())) {
    auto bytesOf = [&](unsigned d) {
      Shape shard;
      if (stat.operand >= 0) {
        Value in = op.getInputs()[stat.operand];
        shard = layout.shardShape(in.getType().cast<RankedTensorType>(),
                                  distOf(in), d);
      }
      return statElements(stat, shard) *
             elementBytes(
                 inner->getOperand(0).getType().cast<RankedTensorType>());
    };
    std::vector<double> fwd(n), dual(n);
    priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, fwd);
    if (grad && stat.hasDual)
      priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, dual);
    // A recomputed forward all-reduces again (charged with the backward).
    if (recomputing)
      priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, dual);
    for (unsigned d : reps) {
      step.comm[d] += fwd[d] + dual[d];
      step.dual[d] += dual[d];
    }
  }
}

void PlanEvaluator::visitTopLevelGraphOp(Operation *op) {
  // Outside a local region a graph op runs whole on every device.
  bool grad = false;
  for (Value in : op->getOperands()) {
    consume(in);
    grad |= needsGradient.contains(in);
  }
  if (grad)
    for (Value r : op->getResults())
      needsGradient.insert(r);
  unsigned timed = out.timedOps;
  priceCompute(op, nullptr, grad);
  if (out.timedOps != timed)
    closeStep(("replicated " + op->getName().getStringRef()).str());
}

llvm::Error PlanEvaluator::run(mlir::func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (auto p = llvm::dyn_cast<ParameterOp>(op)) {
      visitParameter(p);
      continue;
    }
    if (auto local = llvm::dyn_cast<LocalOp>(op)) {
      visitLocal(local);
      continue;
    }
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    if (op.getDialect() &&
        op.getDialect()->getNamespace() == SpmdDialect::getDialectNamespace()) {
      if (auto err = visitRelayout(&op))
        return err;
      continue;
    }
    if (llvm::isa<graph::CostOpInterface>(op)) {
      visitTopLevelGraphOp(&op);
      continue;
    }
    return badInput("the evaluator does not know '{0}'",
                    op.getName().getStringRef().str());
  }
  closeRun();
  // Syncs of parameters never used still run.
  for (auto &[v, sync] : pendingSync)
    chargeSync(sync, onceSyncValues.contains(v));
  pendingSync.clear();
  if (!step.empty())
    closeStep("collectives");
  return llvm::Error::success();
}

llvm::Expected<PlanEstimate> weft::evaluatePlan(mlir::ModuleOp module,
                                                const ClusterSpec &spec,
                                                const EvalOptions &options) {
  auto layout = MeshLayout::get(module, spec, options.foldDevices);
  if (!layout)
    return layout.takeError();
  mlir::func::FuncOp func;
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!func || f.getName() == "main"))
      func = f;
  if (!func)
    return badInput("the plan has no function to evaluate");
  eval::PlanEvaluator evaluator(*layout, spec, options,
                                spmd::SpmdDialect::getMicroBatches(module));
  if (auto err = evaluator.run(func))
    return std::move(err);
  return evaluator.finish();
}
