//===- OpCost.h - Roofline time of one op on one device -----------*- C++
//-*-===//
//
// The compute primitive of the cost model (docs/CostModel.md): an op's time
// is the larger of its arithmetic time at the achieved FLOP/s of its class
// and its memory time at the achieved memory bandwidth, unless a measured
// figure replaces it. The graph dialect's CostOpInterface supplies the work
// (FLOPs and bytes as functions of shard shapes) through a thin adapter.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_OPCOST_H
#define WEFT_COST_OPCOST_H

#include "weft/Cluster/DeviceType.h"
#include <optional>
#include <string>

namespace weft {

/// The work of one op (or of one device's shard of it), in one direction.
struct OpWork {
  OpClass opClass = OpClass::Elementwise;
  /// Floating-point operations (a multiply-add counts 2).
  double flops = 0;
  /// Bytes read from and written to device memory. The adapter computes them
  /// from element counts with bytesPerElement(dtype), so the dtype changes
  /// them.
  double bytes = 0;
  /// The op and its shard shapes, for a profile DB's measurement of exactly
  /// this op (`opKey` in weft/Analysis/GraphCostModel.h, e.g.
  /// "matmul [64,256][256,1024]->[64,1024]"); empty when the work is not one
  /// graph op.
  std::string key;
  /// True for the backward work of the op `key` names.
  bool backward = false;
};

/// Forward and backward work of one op and what it keeps for the backward.
struct OpCostTerms {
  OpWork forward;
  OpWork backward;
  /// Bytes of forward values kept alive until the backward pass.
  double keptBytes = 0;
};

/// A time estimate and where it came from.
struct OpTime {
  double seconds = 0;
  /// True when a measured figure (profile DB) replaced the roofline.
  bool measured = false;
  /// True when the arithmetic term was the larger one (roofline only).
  bool computeBound = false;
};

/// Roofline: max(flops / (peak(dtype) * eff(class, dtype)),
///               bytes / (memory bandwidth * memory efficiency)).
OpTime rooflineTime(const DeviceType &type, DType dtype, const OpWork &work);

/// The op's time: `measuredSeconds` when given, else the roofline.
OpTime opTime(const DeviceType &type, DType dtype, const OpWork &work,
              std::optional<double> measuredSeconds = std::nullopt);

/// Backward work when an op does not state it: gradients with respect to the
/// input and (for ops with weights) the weights, each as costly as the
/// forward, so 2x FLOPs and 2x bytes. Ops without weights should report
/// their own, smaller, backward.
OpWork defaultBackwardWork(const OpWork &forward);

/// Forward plus backward time of `terms` on `type`.
double trainingOpSeconds(const DeviceType &type, DType dtype,
                         const OpCostTerms &terms);

} // namespace weft

#endif // WEFT_COST_OPCOST_H
