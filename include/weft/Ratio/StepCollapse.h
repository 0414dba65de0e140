//===- StepCollapse.h - Merge steps with the same cost pattern ---*- C++
//-*-===//
//
// Steps whose costs have the same coefficient pattern contribute the same
// term to the objective at any ratios, so the LP needs one pair (C_k, M_k)
// for all of them with the summed multiplicity (docs/Design.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_STEPCOLLAPSE_H
#define WEFT_RATIO_STEPCOLLAPSE_H

#include "weft/Ratio/RatioProblem.h"

namespace weft {
namespace ratio {

struct CollapsedSteps {
  /// Index of the first step of each distinct pattern.
  std::vector<unsigned> representative;
  /// Summed multiplicity of each distinct pattern.
  std::vector<double> multiplicity;
  /// For every original step, its distinct pattern.
  std::vector<unsigned> distinctOf;
};

/// Groups the problem's steps by cost pattern (exact comparison of the
/// canonical form: terms sorted and merged, pieces and max terms as sets).
CollapsedSteps collapseSteps(const RatioProblem &problem);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_STEPCOLLAPSE_H
