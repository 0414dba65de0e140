//===- Linearize.h - First-order pieces for non-linear costs -----*- C++
//-*-===//
//
// Costs that are not convex piecewise-linear in the ratios (an all_to_all
// between two segments is bilinear) enter the LP as their first-order
// expansion around the current ratios; the LP is then solved inside a
// TrustRegion around the same ratios (docs/Design.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_LINEARIZE_H
#define WEFT_RATIO_LINEARIZE_H

#include "weft/Ratio/RatioProblem.h"

namespace weft {
namespace ratio {

/// Seconds one device spends in an all_to_all from Gather(segment `from`) to
/// Gather(segment `to`) of a tensor of `bytes`: it sends
/// B_from·(1 − B_to)·bytes and receives B_to·(1 − B_from)·bytes, full duplex
/// at `bandwidth` bytes/s, so max(send, receive) / bandwidth.
double allToAllSeconds(double shareFrom, double shareTo, double bytes,
                       double bandwidth);

/// The same cost for a device of class `c` as a max of the two directions'
/// tangent planes at `center` (exact at `center`, first-order nearby).
MaxCost linearizeAllToAll(unsigned from, unsigned to, unsigned c, double bytes,
                          double bandwidth, const Ratios &center);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_LINEARIZE_H
