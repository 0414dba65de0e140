//===- LowerBound.h - The compute lower bound of any plan ---------*- C++
//-*-===//
//
// No plan can train faster than the cluster's peak: one step takes at least
// training FLOPs / Σ device peak FLOP/s in the chosen dtype (docs/Setups.md).
// Every report states its plan's ratio to this bound.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_LOWERBOUND_H
#define WEFT_COST_LOWERBOUND_H

#include "weft/Cluster/ClusterSpec.h"

namespace weft {

/// Training FLOPs of one step from forward FLOPs when the backward is not
/// known: backward ≈ 2 x forward (gradients w.r.t. inputs and weights).
inline double trainingFlopsFromForward(double forwardFlops) {
  return 3 * forwardFlops;
}

/// Seconds per step at the cluster's peak: trainingFlops / Σ peak(dtype).
double lowerBoundSeconds(double trainingFlops, const ClusterSpec &spec,
                         DType dtype);

/// Same for an explicit set of devices (a Cell's or a stage's).
double lowerBoundSeconds(double trainingFlops, const ClusterSpec &spec,
                         llvm::ArrayRef<unsigned> devices, DType dtype);

/// stepSeconds / bound (>= 1 for any real plan).
inline double ratioToLowerBound(double stepSeconds, double boundSeconds) {
  return boundSeconds > 0 ? stepSeconds / boundSeconds : 0;
}

} // namespace weft

#endif // WEFT_COST_LOWERBOUND_H
