//===- StrategyCost.h - What a parameter strategy costs -----------*- C++
//-*-===//
//
// The one statement of what a parameter's strategy (replicated, ZeRO-1/2/3,
// buffer) asks of a device, per stored element: the gradient and optimizer
// state it holds, the bytes it contributes to the gradient sync and to the
// gather after the optimizer step, and the optimizer update's work. The
// evaluator, the plan's ratio problem (both through eval::PlanWalk) and the
// search's storage options (lib/Synth) read it. docs/Evaluator.md.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_STRATEGYCOST_H
#define WEFT_EVAL_STRATEGYCOST_H

#include "weft/Cost/Memory.h"
#include "weft/Cost/OpCost.h"
#include "weft/Spmd/Duals.h"

namespace weft {

/// A parameter's strategy on a stored shard spread over `idSize` devices
/// (the size of the identity axes of where it is stored). The byte and
/// element figures are given as functions of the stored elements (for
/// numbers) and as their linear factors (for forms of the ratios).
struct StrategyCost {
  const spmd::StrategyDual *dual = nullptr;
  double idSize = 1;
  /// Bytes per element of a gradient and of a working weight.
  double gradientBytes = 0, parameterBytes = 0;

  bool trainable() const { return dual->trainable; }
  /// Whole gradients (replicated, ZeRO-1) are summed locally over
  /// micro-batches and synced once per step.
  bool syncOncePerStep() const { return !dual->gradientSharded; }

  /// The device's memory counts for `elements` stored elements.
  MemoryCounts counts(double elements) const;
  /// Bytes a member contributes to the gradient sync: the whole gradient
  /// for an all_reduce, its 1 / idSize part otherwise.
  double syncBytes(double elements) const;
  /// Bytes a member contributes to the gather after the optimizer step.
  double afterUpdateBytes(double elements) const {
    return elements * parameterBytes / idSize;
  }

  /// Gradient and optimizer-state elements held per stored element.
  double gradientShare() const {
    return dual->gradientSharded ? 1 / idSize : 1;
  }
  double optimizerShare() const {
    return dual->optimizerSharded ? 1 / idSize : 1;
  }
  /// syncBytes and afterUpdateBytes per stored element.
  double syncScale() const;
  double afterUpdateScale() const { return parameterBytes / idSize; }
};

StrategyCost strategyCost(spmd::ParamStrategy strategy, double idSize,
                          DType dtype);

/// FLOPs of one optimizer update per element (Adam 12, momentum 4, SGD 2).
double optimizerFlopsPerElement(Optimizer optimizer);

/// The optimizer update over `elements` elements of state: one elementwise
/// pass reading and writing weights, moments and master copy.
OpWork optimizerUpdateWork(double elements, Optimizer optimizer, DType dtype);

} // namespace weft

#endif // WEFT_EVAL_STRATEGYCOST_H
