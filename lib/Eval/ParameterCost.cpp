//===- ParameterCost.cpp - What a parameter's strategy costs
//---------------===//
//
// Memory terms, gradient sync and the after-update gather of one
// spmd.parameter, from its distribution and the strategy dual table.
//
//===----------------------------------------------------------------------===//

#include "PlanEvaluator.h"
#include <numeric>

using namespace weft;
using namespace weft::eval;
using namespace weft::spmd;

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
  for (unsigned d : reps) {
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
  // Under gradient accumulation a device holding the whole gradient
  // (replicated, ZeRO-1) adds micro-batch gradients locally and syncs once.
  if (!dual.gradientSharded)
    onceSyncValues.insert(v);
}

void PlanEvaluator::consume(Value v) {
  auto it = pendingSync.find(v);
  if (it == pendingSync.end())
    return;
  chargeSync(it->second, onceSyncValues.contains(v));
  pendingSync.erase(it);
}
