//===- Components.h - Split a problem into independent parts ----*- C++ -*-===//
//
// Segments linked by a step (any term of any of its costs) or by a memory row
// form a component; the objective and every row separate over components, so
// Integerize optimises each one alone, exactly.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_COMPONENTS_H
#define WEFT_LIB_RATIO_COMPONENTS_H

#include "weft/Ratio/RatioProblem.h"

namespace weft {
namespace ratio {

struct Component {
  /// Original indices of the component's segments (sub-problem order).
  std::vector<unsigned> segments;
  /// The classes and nodes of the whole problem, the component's segments,
  /// the steps touching them and the memory rows over them, re-indexed.
  RatioProblem problem;
};

/// Components of segments touched by at least one step or memory row.
/// Steps that touch no segment are constants and belong to none.
std::vector<Component> splitIndependent(const RatioProblem &problem);

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_COMPONENTS_H
