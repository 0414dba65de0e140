//===- Evaluator.cpp - The one place a plan is scored ---------------------===//
//
// The evaluator's Domain of eval::PlanWalk: collectives and their duals in
// seconds, compute of every spmd.local at shard shapes, memory per device.
// docs/Evaluator.md.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "PlanEvaluator.h"
#include "ShardInference.h"
#include "StepRecorder.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Eval/StepEvents.h"
#include <map>
#include <numeric>

using namespace weft;
using namespace weft::eval;
using namespace weft::spmd;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

double PlanEvaluator::elementsOf(RankedTensorType type, DistAttr dist,
                                 unsigned d) const {
  Shape s = layout.shardShape(type, dist, d);
  return double(std::accumulate(s.begin(), s.end(), int64_t(1),
                                std::multiplies<int64_t>()));
}

double PlanEvaluator::recipeBytes(LocalOp op, const RecipeStat &stat,
                                  unsigned d, double elementBytes) const {
  Shape shard;
  if (stat.operand >= 0) {
    Value in = op.getInputs()[stat.operand];
    shard = layout.shardShape(in.getType().cast<RankedTensorType>(),
                              distOrReplicated(in, layout.numAxes()), d);
  }
  return statElements(stat, shard) * elementBytes;
}

PlanEvaluator::Times &PlanEvaluator::slot(Slot s) {
  switch (s) {
  case Slot::Forward:
  case Slot::RecipeForward:
    return forwardSlot;
  case Slot::Dual:
  case Slot::RecipeDual:
    return dualSlot;
  case Slot::AfterUpdate:
    return afterUpdate;
  }
  llvm_unreachable("unknown slot");
}

void PlanEvaluator::relayoutPriced(Operation *op, unsigned axis,
                                   llvm::ArrayRef<double> fwdBytes) {
  CollectiveEstimate record;
  record.op = op->getName().getStringRef().str();
  if (auto name = op->getLoc().dyn_cast<mlir::NameLoc>())
    record.location = name.getName().str();
  record.axis = axis;
  for (unsigned d : reps) {
    step.comm[d] += forwardSlot[d];
    record.bytes = std::max(record.bytes, fwdBytes[d]);
  }
  record.forwardSeconds = maxOf(forwardSlot);
  for (unsigned d : reps) {
    step.comm[d] += dualSlot[d];
    step.dual[d] += dualSlot[d];
  }
  record.dualSeconds = maxOf(dualSlot);
  out.collectives.push_back(std::move(record));
  if (recorder)
    recorder->relayout(op, axis, forwardSlot, dualSlot);
  forwardSlot.assign(n, 0);
  dualSlot.assign(n, 0);
}

void PlanEvaluator::recipePriced() {
  for (unsigned d : reps) {
    step.comm[d] += forwardSlot[d] + dualSlot[d];
    step.dual[d] += dualSlot[d];
  }
  if (recorder)
    recorder->recipe(forwardSlot, dualSlot);
  forwardSlot.assign(n, 0);
  dualSlot.assign(n, 0);
}

void PlanEvaluator::holdParameter(unsigned d, double elements,
                                  const StrategyCost &cost) {
  MemoryCounts c = cost.counts(elements);
  counts[d].storedParameters += c.storedParameters;
  counts[d].gradientParameters += c.gradientParameters;
  counts[d].optimizerParameters += c.optimizerParameters;
  optimizerElements[d] += c.optimizerParameters;
}

void PlanEvaluator::chargeSync(const Times &sync, bool once) {
  for (unsigned d : reps) {
    step.comm[d] += sync[d];
    step.sync[d] += sync[d];
    if (once)
      step.onceSync[d] += sync[d];
  }
  if (recorder)
    recorder->sync(sync, once);
}

void PlanEvaluator::closeRun() {
  for (unsigned d : reps)
    transient[d] = std::max(transient[d], runBytes[d]);
  runBytes.assign(n, 0);
}

bool PlanEvaluator::compute(Operation *op, mlir::Region *region, bool backward,
                            bool recomputing) {
  // What one device's compute costs. Devices of one class whose operands
  // and results have the same shard shapes cost the same: the key is read
  // from the layout's per-device extents (MeshLayout::shardExtents), and
  // shapes are built and priced only for the first device of each key.
  struct Priced {
    double forward = 0, backward = 0, kept = 0, produced = 0;
    unsigned timed = 0, measured = 0;
  };
  unsigned timedBefore = out.timedOps;
  // This op's compute per device, for the recorder.
  std::vector<double> opForward, opBackward;
  if (recorder) {
    opForward.assign(n, 0);
    opBackward.assign(n, 0);
  }
  auto addPriced = [&](const Priced &p, unsigned d) {
    if (recorder) {
      opForward[d] = p.forward;
      opBackward[d] = backward ? p.backward : 0;
    }
    step.forward[d] += p.forward;
    out.timedOps += p.timed * layout.orbitSize(d);
    out.measuredOps += p.measured * layout.orbitSize(d);
    if (backward) {
      step.backward[d] += p.backward;
      (recomputing ? runBytes[d] : kept[d]) += p.kept;
    }
    transient[d] = std::max(transient[d], p.produced);
  };
  auto distOf = [&](Value v) { return distOrReplicated(v, layout.numAxes()); };
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
        dims.push_back({layout.shardExtents(dist, i), type.getDimSize(i)});
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
          shapes[r] = inferShard(r, shapes, [](int64_t e) { return e; });
        graph::TensorShape t = graph::TensorShape::of(r.getType());
        t.dims = shapes[r];
        s.results.push_back(t);
        p.produced +=
            double(t.numElements()) *
            elementBytes(r.getType().cast<RankedTensorType>(), options.dtype);
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
  if (recorder)
    recorder->compute(op, opForward, opBackward);
  return out.timedOps != timedBefore;
}

llvm::Error PlanEvaluator::run(mlir::func::FuncOp func) {
  PlanWalk<PlanEvaluator> walk(*this, layout, options);
  if (auto err = walk.run(func))
    return err;
  if (!step.empty())
    closeStep("collectives");
  return llvm::Error::success();
}

EvalOptions weft::optionsFor(mlir::ModuleOp module,
                             const EvalOptions &options) {
  EvalOptions out = options;
  out.gradientBucketBytes = double(spmd::SpmdDialect::getGradientBucketBytes(
      module, int64_t(options.gradientBucketBytes)));
  return out;
}

llvm::Expected<PlanEstimate> eval::evaluate(mlir::ModuleOp module,
                                            const ClusterSpec &spec,
                                            const EvalOptions &planOptions,
                                            StepEvents *events) {
  if (spmd::isPipelined(module)) {
    auto estimate = evaluatePipelined(module, spec, planOptions);
    if (estimate && events)
      *events = pipelineEvents(module, *estimate, spec);
    return estimate;
  }
  EvalOptions options = optionsFor(module, planOptions);
  auto layout = MeshLayout::get(module, spec, options.foldDevices);
  if (!layout)
    return layout.takeError();
  mlir::func::FuncOp func;
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!func || f.getName() == "main"))
      func = f;
  if (!func)
    return badInput("the plan has no function to evaluate");
  int64_t microBatches = spmd::SpmdDialect::getMicroBatches(module);
  eval::PlanEvaluator evaluator(*layout, spec, options, microBatches);
  std::optional<StepRecorder> recorder;
  if (events)
    evaluator.recorder = &recorder.emplace(*layout);
  if (auto err = evaluator.run(func))
    return std::move(err);
  PlanEstimate estimate = evaluator.finish();
  if (events)
    *events = recorder->layOut(
        overlapsGradientSync(options.overlapGradientSync, options.profile),
        microBatches);
  return estimate;
}

llvm::Expected<PlanEstimate> weft::evaluatePlan(mlir::ModuleOp module,
                                                const ClusterSpec &spec,
                                                const EvalOptions &options) {
  return eval::evaluate(module, spec, options, nullptr);
}
