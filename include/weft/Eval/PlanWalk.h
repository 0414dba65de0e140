//===- PlanWalk.h - One traversal of an spmd plan -----------------*- C++
//-*-===//
//
// The one walk over an `spmd` program's function, in order: parameters and
// their strategies (memory terms, gradient sync, after-update gather),
// relayouts and their duals, `spmd.local` steps with their recipe-internal
// all-reduces, top-level graph ops, which values carry a gradient, ZeRO-3
// regathers, when a parameter's gradient sync is charged (the step of its
// first use), micro-batches (syncs that run once per step) and
// recomputation runs. What is computed is the Domain's: the evaluator
// prices in seconds (lib/Eval/Evaluator.cpp), the plan's ratio problem in
// linear forms of the ratios (lib/Eval/RatioFromPlan.cpp). docs/Evaluator.md.
//
// A Domain derives from DomainBase<Bytes, Time> (per-device quantities: a
// double, or a form of the ratios) and provides:
//   Bytes bytesOf(Value v, DistAttr dist, unsigned d);   shard bytes on d
//   Bytes elementsOf(RankedTensorType t, DistAttr dist, unsigned d);
//   Bytes syncBytes(const Bytes &elements, const StrategyCost &cost);
//   Bytes afterUpdateBytes(const Bytes &elements, const StrategyCost &cost);
//   Bytes recipeBytes(LocalOp op, const RecipeStat &stat, unsigned d,
//                     double elementBytes);  one recipe all-reduce's buffer
//   Time collectiveTime(Collective kind, ArrayRef<unsigned> clusterGroup,
//                       ArrayRef<Bytes> bytes, CollectiveVariant variant);
//   void addTime(Time &into, const Time &t);
//   Times &slot(Slot s);     where priced collectives of a role go
//   void relayoutPriced(Operation *op, unsigned axis,
//                       ArrayRef<Bytes> fwdBytes);  folds the slots
//   void recipePriced();     folds the slots of one recipe all-reduce
//   void holdParameter(unsigned d, const Bytes &elements,
//                      const StrategyCost &cost);
//   void adjustSync(Times &sync, bool once);
//   void chargeSync(const Times &sync, bool once);
//   void keep(unsigned d, const Bytes &b);       kept for the backward
//   void transientBytes(unsigned d, const Bytes &b);  live for a moment
//   void closeRun();         the open recomputation run ends
//   bool compute(Operation *op, Region *region, bool backward,
//                bool recomputing);  prices the op's work; any op timed
//   void closeStep(StringRef label);
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_PLANWALK_H
#define WEFT_EVAL_PLANWALK_H

#include "Graph/IR/GraphInterfaces.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Eval/CollectivePricer.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Eval/StrategyCost.h"
#include "weft/Spmd/Duals.h"
#include "weft/Spmd/RecipeStats.h"
#include "weft/Spmd/RecomputeRun.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace weft::eval {

/// What every Domain prices on (the mesh, the cluster, the options and the
/// devices it prices) and its quantity types: per-device bytes and times,
/// and a vector of times (one per device).
template <typename BytesT, typename TimeT> struct DomainBase {
  using Bytes = BytesT;
  using Time = TimeT;
  using Times = std::vector<TimeT>;

  DomainBase(const MeshLayout &layout, const ClusterSpec &spec,
             const EvalOptions &options)
      : layout(layout), spec(spec), options(options), n(layout.numDevices()),
        reps(layout.representatives()) {}

  const MeshLayout &layout;
  const ClusterSpec &spec;
  const EvalOptions &options;
  unsigned n;
  /// One device per orbit (MeshLayout::representatives): only these are
  /// priced; per-device vectors hold nothing for the others.
  llvm::ArrayRef<unsigned> reps;
};

/// Where the walk puts a priced collective.
enum class Slot {
  /// A relayout's forward collective.
  Forward,
  /// A relayout's dual (and a ZeRO-3 regather for the backward).
  Dual,
  /// A recipe's forward all-reduce.
  RecipeForward,
  /// A recipe's backward (and recomputed forward) all-reduces.
  RecipeDual,
  /// The gathers after the optimizer step.
  AfterUpdate,
};

/// `dist`, or replicated on every axis when the value has none.
inline spmd::DistAttr distOrReplicated(mlir::Value v, unsigned numAxes) {
  spmd::DistAttr d = spmd::getDist(v);
  return d ? d : spmd::DistAttr::replicated(v.getContext(), numAxes);
}

/// How a relayout op runs: its `algorithm` and `mode` attributes.
CollectiveVariant variantOf(mlir::Operation *op);

/// Bytes of one element of `type` as it is stored and moved: the compute
/// dtype's for floats, the element type's own width otherwise.
double elementBytes(mlir::RankedTensorType type, DType dtype);

template <typename Domain> class PlanWalk {
public:
  using Bytes = typename Domain::Bytes;
  using Times = typename Domain::Times;

  PlanWalk(Domain &domain, const MeshLayout &layout, const EvalOptions &options)
      : dom(domain), layout(layout), options(options), n(layout.numDevices()),
        reps(layout.representatives()) {}

  /// Walks `func`; errors: bad input (an op the walk does not know).
  llvm::Error run(mlir::func::FuncOp func) {
    for (mlir::Operation &op : func.getBody().front()) {
      if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op)) {
        visitParameter(p);
        continue;
      }
      if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
        visitLocal(local);
        continue;
      }
      if (llvm::isa<mlir::func::ReturnOp>(op))
        continue;
      if (op.getDialect() && op.getDialect()->getNamespace() ==
                                 spmd::SpmdDialect::getDialectNamespace()) {
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
    dom.closeRun();
    // Syncs of parameters never used still run.
    for (auto &[v, sync] : pendingSync)
      dom.chargeSync(sync, onceSyncValues.contains(v));
    pendingSync.clear();
    return llvm::Error::success();
  }

  /// Adds `kind` along `axes` to `into` for every representative;
  /// `bytesOf(d)` is representative d's contribution.
  template <typename BytesOf>
  void priceAlong(spmd::Collective kind, AxisMask axes, BytesOf bytesOf,
                  CollectiveVariant variant, Times &into) {
    if (layout.sizeOf(axes) <= 1 || !spmd::communicates(kind))
      return;
    std::vector<bool> done(n);
    llvm::SmallVector<Bytes, 8> bytes;
    for (unsigned d : reps) {
      if (done[d])
        continue;
      llvm::ArrayRef<unsigned> group = layout.groupOf(d, axes);
      llvm::ArrayRef<unsigned> cluster = layout.clusterGroupOf(d, axes);
      bytes.clear();
      for (unsigned y : group)
        bytes.push_back(bytesOf(layout.representativeOf(y)));
      decltype(auto) t = dom.collectiveTime(kind, cluster, bytes, variant);
      for (unsigned y : group) {
        if (layout.representativeOf(y) == y)
          dom.addTime(into[y], t);
        done[y] = true;
      }
    }
  }

private:
  spmd::DistAttr distOf(mlir::Value v) const {
    return distOrReplicated(v, layout.numAxes());
  }

  void visitParameter(spmd::ParameterOp op) {
    mlir::Value v = op.getResult();
    spmd::DistAttr dist = op.getDist();
    AxisMask idAxes = 0;
    for (auto [a, e] : llvm::enumerate(dist.getAxes()))
      if (e.isIdentity())
        idAxes |= 1u << a;
    StrategyCost cost = strategyCost(
        op.getStrategy(), double(layout.sizeOf(idAxes)), options.dtype);
    auto type = v.getType().cast<mlir::RankedTensorType>();
    std::vector<Bytes> elements(n);
    for (unsigned d : reps) {
      elements[d] = dom.elementsOf(type, dist, d);
      dom.holdParameter(d, elements[d], cost);
    }
    if (!cost.trainable())
      return;
    needsGradient.insert(v);
    if (cost.dual->regatherInBackward)
      zero3Values.insert(v);
    CollectiveVariant best;
    best.bestAllReduce = true;
    CollectiveVariant bucketed = best;
    bucketed.bucketBytes = options.gradientBucketBytes;
    Times sync(n);
    priceAlong(
        cost.dual->gradientSync, idAxes,
        [&](unsigned d) { return dom.syncBytes(elements[d], cost); }, bucketed,
        sync);
    bool once = cost.syncOncePerStep();
    dom.adjustSync(sync, once);
    priceAlong(
        cost.dual->afterUpdate, idAxes,
        [&](unsigned d) { return dom.afterUpdateBytes(elements[d], cost); },
        best, dom.slot(Slot::AfterUpdate));
    pendingSync[v] = std::move(sync);
    if (once)
      onceSyncValues.insert(v);
  }

  /// A parameter's gradient sync is charged to the step of its first use.
  void consume(mlir::Value v) {
    auto it = pendingSync.find(v);
    if (it == pendingSync.end())
      return;
    dom.chargeSync(it->second, onceSyncValues.contains(v));
    pendingSync.erase(it);
  }

  llvm::Error visitRelayout(mlir::Operation *op) {
    std::optional<spmd::CollectiveDual> dual = spmd::dualOf(op);
    if (!dual)
      return badInput("the evaluator does not know '{0}'",
                      op->getName().getStringRef().str());
    if (llvm::isa<spmd::SendOp, spmd::RecvOp>(op))
      return llvm::Error::success(); // Stages come with Cells (not priced).
    mlir::Value in = op->getOperand(0), res = op->getResult(0);
    spmd::DistAttr inDist = distOf(in), outDist = distOf(res);
    unsigned axis = op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
    AxisMask mask = 1u << axis;
    bool grad = needsGradient.contains(in);
    if (grad)
      needsGradient.insert(res);
    // A parameter's pending sync moves with it to its relayouts.
    if (auto it = pendingSync.find(in); it != pendingSync.end()) {
      Times sync = std::move(it->second);
      pendingSync.erase(it);
      pendingSync[res] = std::move(sync);
      if (onceSyncValues.contains(in))
        onceSyncValues.insert(res);
    }
    bool zero3 = zero3Values.contains(in);
    if (zero3)
      zero3Values.insert(res);
    CollectiveVariant variant = variantOf(op);
    std::vector<Bytes> inBytes(n), outBytes(n), fwdBytes(n);
    // What each member contributes: its input shard, except a
    // reduce-scatter (the shard it ends with).
    bool byResult = dual->forward == spmd::Collective::ReduceScatter;
    for (unsigned d : reps) {
      inBytes[d] = dom.bytesOf(in, inDist, d);
      outBytes[d] = dom.bytesOf(res, outDist, d);
      fwdBytes[d] = byResult ? outBytes[d] : inBytes[d];
    }
    auto fwd = [&](unsigned d) { return fwdBytes[d]; };
    priceAlong(dual->forward, mask, fwd, variant, dom.slot(Slot::Forward));
    bool gathered = dual->forward == spmd::Collective::AllGather;
    if (grad && spmd::communicates(dual->backward)) {
      // The dual moves the gradient of the result: the same shards, in
      // reverse (an all_to_all back sends what the result holds).
      Times &into = dom.slot(Slot::Dual);
      priceAlong(
          dual->backward, mask,
          [&](unsigned d) {
            return dual->reversesLayout ? outBytes[d] : fwdBytes[d];
          },
          variant, into);
      // ZeRO-3: the gathered parameter is gathered again for the backward
      // pass unless the forward's copy is kept.
      if (zero3 && gathered && !options.keepGatheredParameters)
        priceAlong(spmd::Collective::AllGather, mask, fwd, variant, into);
    }
    dom.relayoutPriced(op, axis, fwdBytes);
    for (unsigned d : reps) {
      if (zero3 && gathered && options.keepGatheredParameters)
        dom.keep(d, outBytes[d]);
      else
        dom.transientBytes(d, outBytes[d]);
    }
    return llvm::Error::success();
  }

  /// Consumes `inputs`; whether a gradient flows through them.
  bool takeInputs(mlir::ValueRange inputs) {
    bool grad = false;
    for (mlir::Value in : inputs) {
      consume(in);
      grad |= needsGradient.contains(in);
    }
    return grad;
  }

  void visitLocal(spmd::LocalOp op) {
    bool grad = takeInputs(op.getInputs());
    if (grad)
      for (mlir::Value r : op.getResults())
        if (r.getType()
                .cast<mlir::RankedTensorType>()
                .getElementType()
                .isa<mlir::FloatType>())
          needsGradient.insert(r);
    bool recomputing = runs.price(
        op, grad, [&] { dom.closeRun(); },
        [&](mlir::Value in) {
          for (unsigned d : reps)
            dom.keep(d, dom.bytesOf(in, distOf(in), d));
        });
    dom.compute(op, &op.getBody(), grad, recomputing);
    priceRecipeStats(op, grad, recomputing);
    dom.closeStep(("local " + op.getVariant()).str());
  }

  /// The all-reduces inside the recipe (weft/Spmd/RecipeStats.h).
  void priceRecipeStats(spmd::LocalOp op, bool grad, bool recomputing) {
    mlir::Operation *inner = spmd::recipeOp(op);
    if (!inner)
      return;
    llvm::SmallVector<spmd::RecipeStat, 2> stats =
        spmd::recipeStats(inner, op.getVariant(), layout.sizes());
    if (stats.empty())
      return;
    double eb = elementBytes(
        inner->getOperand(0).getType().cast<mlir::RankedTensorType>(),
        options.dtype);
    for (const spmd::RecipeStat &stat : stats) {
      auto bytesOf = [&](unsigned d) {
        return dom.recipeBytes(op, stat, d, eb);
      };
      AxisMask mask = 1u << stat.axis;
      priceAlong(spmd::Collective::AllReduce, mask, bytesOf, {},
                 dom.slot(Slot::RecipeForward));
      if (grad && stat.hasDual)
        priceAlong(spmd::Collective::AllReduce, mask, bytesOf, {},
                   dom.slot(Slot::RecipeDual));
      // A recomputed forward all-reduces again (charged with the backward).
      if (recomputing)
        priceAlong(spmd::Collective::AllReduce, mask, bytesOf, {},
                   dom.slot(Slot::RecipeDual));
      dom.recipePriced();
    }
  }

  void visitTopLevelGraphOp(mlir::Operation *op) {
    // Outside a local region a graph op runs whole on every device.
    bool grad = takeInputs(op->getOperands());
    if (grad)
      for (mlir::Value r : op->getResults())
        needsGradient.insert(r);
    if (dom.compute(op, nullptr, grad, false))
      dom.closeStep(("replicated " + op->getName().getStringRef()).str());
  }

  Domain &dom;
  const MeshLayout &layout;
  const EvalOptions &options;
  unsigned n;
  /// One device per orbit (MeshLayout::representatives): only these are
  /// priced.
  llvm::ArrayRef<unsigned> reps;
  /// Values whose gradient flows back (they depend on a trainable
  /// parameter).
  llvm::DenseSet<mlir::Value> needsGradient;
  /// Values that are (relayouts of) a ZeRO-3 parameter.
  llvm::DenseSet<mlir::Value> zero3Values;
  /// Gradient sync of a parameter, per device, charged to the step of its
  /// first use.
  llvm::DenseMap<mlir::Value, Times> pendingSync;
  /// Values whose pending sync runs once per step, not once per
  /// micro-batch (replicated and ZeRO-1 parameters and their relayouts).
  llvm::DenseSet<mlir::Value> onceSyncValues;
  spmd::RecomputeRun runs;
};

} // namespace weft::eval

#endif // WEFT_EVAL_PLANWALK_H
