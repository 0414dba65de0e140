//===- Evaluator.cpp - The one place a plan is scored ---------------------===//
//
// Walks the program's function in order, keeping per-device accumulators
// for the current step (compute, communication) and for memory. See
// docs/Evaluator.md for the composition.
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/Evaluator.h"
#include "CollectivePricer.h"
#include "Graph/IR/GraphInterfaces.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Spmd/Duals.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/DenseSet.h"
#include <algorithm>
#include <numeric>

using namespace weft;
using namespace weft::spmd;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

namespace {

using Shape = llvm::SmallVector<int64_t, 4>;

/// Per-device accumulators of the step being built.
struct StepAccumulator {
  std::vector<double> forward, backward, comm, sync, dual;
  explicit StepAccumulator(unsigned n)
      : forward(n), backward(n), comm(n), sync(n), dual(n) {}
  bool empty() const {
    auto zero = [](const std::vector<double> &v) {
      return llvm::all_of(v, [](double x) { return x == 0; });
    };
    return zero(forward) && zero(backward) && zero(comm);
  }
};

double maxOf(const std::vector<double> &v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

class PlanEvaluator {
public:
  PlanEvaluator(const MeshLayout &layout, const ClusterSpec &spec,
                const EvalOptions &options)
      : layout(layout), spec(spec), options(options),
        pricer(spec, options.profile, options.collectives),
        n(layout.numDevices()), step(n), counts(n), kept(n), transient(n),
        optimizerElements(n), afterUpdate(n) {}

  llvm::Error run(mlir::func::FuncOp func);
  PlanEstimate finish();

private:
  /// Bytes of one element of `type` as it moves between devices.
  double elementBytes(RankedTensorType type) const {
    if (type.getElementType().isa<mlir::FloatType>())
      return bytesPerElement(options.dtype);
    return std::max(1u, type.getElementTypeBitWidth() / 8);
  }
  /// Bytes of `value`'s shard on device `d`.
  double shardBytes(Value value, DistAttr dist, unsigned d) const {
    auto type = value.getType().cast<RankedTensorType>();
    Shape s = layout.shardShape(type, dist, d);
    return elementBytes(type) *
           double(std::accumulate(s.begin(), s.end(), int64_t(1),
                                  std::multiplies<int64_t>()));
  }
  DistAttr distOf(Value v) const {
    DistAttr d = getDist(v);
    return d ? d : DistAttr::replicated(v.getContext(), layout.numAxes());
  }

  void visitParameter(ParameterOp op);
  llvm::Error visitRelayout(Operation *op);
  void visitLocal(LocalOp op);
  void visitTopLevelGraphOp(Operation *op);
  /// Prices the graph ops of a region (or one op) on every device given
  /// the shard shapes of the region's inputs and yielded results.
  void priceCompute(Operation *op, mlir::Region *region, bool backward);
  /// Prices `kind` along `axes` for every device; `bytesOf(d)` is device
  /// d's contribution. Adds to `into` (per device).
  void priceAlong(Collective kind, AxisMask axes,
                  llvm::function_ref<double(unsigned)> bytesOf,
                  CollectiveVariant variant, std::vector<double> &into);
  void consume(Value v);
  void closeStep(llvm::StringRef label);

  const MeshLayout &layout;
  const ClusterSpec &spec;
  const EvalOptions &options;
  CollectivePricer pricer;
  unsigned n;
  StepAccumulator step;
  PlanEstimate out;
  std::vector<MemoryCounts> counts;
  std::vector<double> kept, transient, optimizerElements, afterUpdate;
  /// Values whose gradient flows back (they depend on a trainable parameter).
  llvm::DenseSet<Value> needsGradient;
  /// Values that are (relayouts of) a ZeRO-3 parameter.
  llvm::DenseSet<Value> zero3Values;
  /// Gradient sync of a parameter, per device, charged to the step of its
  /// first use.
  llvm::DenseMap<Value, std::vector<double>> pendingSync;
};

} // namespace

void PlanEvaluator::priceAlong(Collective kind, AxisMask axes,
                               llvm::function_ref<double(unsigned)> bytesOf,
                               CollectiveVariant variant,
                               std::vector<double> &into) {
  if (layout.sizeOf(axes) <= 1 || !communicates(kind))
    return;
  std::vector<bool> done(n);
  for (unsigned d = 0; d < n; ++d) {
    if (done[d])
      continue;
    llvm::SmallVector<unsigned> group = layout.groupAlong(d, axes);
    llvm::SmallVector<unsigned> cluster;
    llvm::SmallVector<double> bytes;
    for (unsigned y : group) {
      cluster.push_back(layout.clusterDevice(y));
      bytes.push_back(bytesOf(y));
    }
    double t = pricer.seconds(kind, cluster, bytes, variant);
    for (unsigned y : group) {
      into[y] += t;
      done[y] = true;
    }
  }
}

void PlanEvaluator::visitParameter(ParameterOp op) {
  auto strategy = parseParamStrategy(op.getStrategy());
  const StrategyDual &dual = dualOf(*strategy);
  Value v = op.getResult();
  DistAttr dist = op.getDist();
  AxisMask idAxes = 0;
  for (auto [a, e] : llvm::enumerate(dist.getAxes()))
    if (e.isIdentity())
      idAxes |= 1u << a;
  double idSize = double(layout.sizeOf(idAxes));
  double gb = gradientBytesPerElement(options.dtype);
  double pb = parameterBytesPerElement(options.dtype);
  std::vector<double> elements(n);
  for (unsigned d = 0; d < n; ++d) {
    auto type = v.getType().cast<RankedTensorType>();
    Shape s = layout.shardShape(type, dist, d);
    elements[d] = double(std::accumulate(s.begin(), s.end(), int64_t(1),
                                         std::multiplies<int64_t>()));
    counts[d].storedParameters += elements[d];
    if (!dual.trainable)
      continue;
    counts[d].gradientParameters +=
        dual.gradientSharded ? elements[d] / idSize : elements[d];
    double opt = dual.optimizerSharded ? elements[d] / idSize : elements[d];
    counts[d].optimizerParameters += opt;
    optimizerElements[d] += opt;
  }
  if (!dual.trainable)
    return;
  needsGradient.insert(v);
  if (dual.regatherInBackward)
    zero3Values.insert(v);
  std::vector<double> sync(n);
  CollectiveVariant best;
  best.bestAllReduce = true;
  if (dual.gradientSync == Collective::AllReduce)
    priceAlong(
        Collective::AllReduce, idAxes,
        [&](unsigned d) { return elements[d] * gb; }, best, sync);
  else
    priceAlong(
        dual.gradientSync, idAxes,
        [&](unsigned d) { return elements[d] * gb / idSize; }, best, sync);
  priceAlong(
      dual.afterUpdate, idAxes,
      [&](unsigned d) { return elements[d] * pb / idSize; }, best, afterUpdate);
  pendingSync[v] = std::move(sync);
}

void PlanEvaluator::consume(Value v) {
  auto it = pendingSync.find(v);
  if (it == pendingSync.end())
    return;
  for (unsigned d = 0; d < n; ++d) {
    step.comm[d] += it->second[d];
    step.sync[d] += it->second[d];
  }
  pendingSync.erase(it);
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
  priceAlong(dual->forward, mask, fwdBytes, variant, step.comm);
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
    for (unsigned d = 0; d < n; ++d) {
      step.comm[d] += dualTime[d];
      step.dual[d] += dualTime[d];
    }
  }
  for (unsigned d = 0; d < n; ++d) {
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
  for (unsigned d = 0; d < n; ++d) {
    const DeviceType &type = layout.typeOf(d);
    llvm::DenseMap<Value, Shape> shapes;
    auto shapeOf = [&](Value v) -> Shape {
      if (auto it = shapes.find(v); it != shapes.end())
        return it->second;
      auto t = v.getType().cast<RankedTensorType>();
      return Shape(t.getShape());
    };
    if (region) {
      Operation *yield = region->front().getTerminator();
      for (auto [arg, in] :
           llvm::zip(region->front().getArguments(), op->getOperands()))
        shapes[arg] = layout.shardShape(in.getType().cast<RankedTensorType>(),
                                        distOf(in), d);
      for (auto [yielded, res] :
           llvm::zip(yield->getOperands(), op->getResults()))
        shapes[yielded] = layout.shardShape(
            res.getType().cast<RankedTensorType>(), distOf(res), d);
    }
    double produced = 0;
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
        produced += double(t.numElements()) *
                    elementBytes(r.getType().cast<RankedTensorType>());
      }
      OpCostTerms terms = costTermsOf(cop, s, options.dtype);
      if (terms.forward.flops == 0 && terms.forward.bytes == 0)
        return;
      OpTime fwd = opTime(type, options.dtype, terms.forward, options.profile);
      step.forward[d] += fwd.seconds;
      ++out.timedOps;
      if (fwd.measured)
        ++out.measuredOps;
      if (!backward)
        return;
      step.backward[d] +=
          opTime(type, options.dtype, terms.backward, options.profile).seconds;
      kept[d] += terms.keptBytes;
    };
    if (region)
      region->walk([&](graph::CostOpInterface cop) { priceOne(cop); });
    else if (auto cop = llvm::dyn_cast<graph::CostOpInterface>(op))
      priceOne(cop);
    transient[d] = std::max(transient[d], produced);
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
  priceCompute(op, &op.getBody(), grad);
  closeStep(("local " + op.getVariant()).str());
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

void PlanEvaluator::closeStep(llvm::StringRef label) {
  StepEstimate s;
  s.label = label.str();
  std::vector<double> total(n);
  for (unsigned d = 0; d < n; ++d)
    total[d] = step.forward[d] + step.backward[d];
  s.computeSeconds = maxOf(total);
  s.backwardSeconds = maxOf(step.backward);
  s.commSeconds = maxOf(step.comm);
  s.gradientSyncSeconds = maxOf(step.sync);
  s.dualSeconds = maxOf(step.dual);
  out.steps.push_back(std::move(s));
  step = StepAccumulator(n);
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
  // Syncs of parameters never used still run.
  for (auto &[v, sync] : pendingSync)
    for (unsigned d = 0; d < n; ++d) {
      step.comm[d] += sync[d];
      step.sync[d] += sync[d];
    }
  pendingSync.clear();
  if (!step.empty())
    closeStep("collectives");
  return llvm::Error::success();
}

PlanEstimate PlanEvaluator::finish() {
  // Optimizer: an elementwise pass over the state each device updates.
  double p = parameterBytesPerElement(options.dtype);
  double g = gradientBytesPerElement(options.dtype);
  double o = optimizerBytesPerElement(options.optimizer, options.dtype);
  double flopsPerElement = options.optimizer == Optimizer::Adam       ? 12
                           : options.optimizer == Optimizer::Momentum ? 4
                                                                      : 2;
  std::vector<double> update(n);
  for (unsigned d = 0; d < n; ++d) {
    OpWork work{OpClass::Elementwise, flopsPerElement * optimizerElements[d],
                optimizerElements[d] * (2 * p + g + 2 * o)};
    update[d] =
        opTime(layout.typeOf(d), options.dtype, work, options.profile).seconds;
  }
  double updateSeconds = maxOf(update), gatherSeconds = maxOf(afterUpdate);
  out.optimizerSeconds = updateSeconds + gatherSeconds;

  double sync = 0, critical = 0;
  for (const StepEstimate &s : out.steps) {
    out.computeSeconds += s.computeSeconds;
    out.commSeconds += s.commSeconds;
    sync += s.gradientSyncSeconds;
    critical += s.computeSeconds + s.commSeconds - s.gradientSyncSeconds;
  }
  out.commSeconds += gatherSeconds;
  out.exposedGradientSyncSeconds = sync;
  if (options.overlapGradientSync) {
    // Backward runs the steps in reverse; a step's gradient sync may start
    // once its backward is done and runs on one channel in that order.
    double t = 0, channel = 0;
    for (const StepEstimate &s : llvm::reverse(out.steps)) {
      t += s.backwardSeconds + s.dualSeconds;
      if (s.gradientSyncSeconds > 0)
        channel = std::max(channel, t) + s.gradientSyncSeconds;
    }
    out.exposedGradientSyncSeconds = std::max(0.0, channel - t);
  }
  out.stepSeconds =
      critical + out.exposedGradientSyncSeconds + out.optimizerSeconds;
  double commCritical = out.stepSeconds - out.computeSeconds - updateSeconds;
  out.commShare = out.stepSeconds > 0 ? commCritical / out.stepSeconds : 0;

  for (unsigned d = 0; d < n; ++d) {
    MemoryCounts c = counts[d];
    c.keptActivationElements = kept[d] / bytesPerElement(options.dtype);
    DeviceMemoryEstimate m;
    m.device = d;
    m.clusterDevice = layout.clusterDevice(d);
    m.type = layout.typeOf(d).name;
    m.terms = deviceMemory(c, options.dtype, options.optimizer);
    m.transientBytes = transient[d];
    m.capacityBytes = layout.typeOf(d).memoryBytes();
    m.fits =
        m.peakBytes() <= m.capacityBytes * (1 - options.reservedMemoryFraction);
    out.fits &= m.fits;
    out.peakMemoryBytes = std::max(out.peakMemoryBytes, m.peakBytes());
    out.memory.push_back(std::move(m));
  }
  return std::move(out);
}

llvm::Expected<PlanEstimate> weft::evaluatePlan(mlir::ModuleOp module,
                                                const ClusterSpec &spec,
                                                const EvalOptions &options) {
  auto layout = MeshLayout::get(module, spec);
  if (!layout)
    return layout.takeError();
  mlir::func::FuncOp func;
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!func || f.getName() == "main"))
      func = f;
  if (!func)
    return badInput("the plan has no function to evaluate");
  PlanEvaluator evaluator(*layout, spec, options);
  if (auto err = evaluator.run(func))
    return std::move(err);
  return evaluator.finish();
}
