//===- LocalSearch.h - Improve integer sizes by unit moves ------*- C++ -*-===//
//
// Steepest descent over moves of alignment units between the classes of one
// segment, scored by the true objective: turns the rounded LP solution into a
// better incumbent before Z3 searches (and bounds) the rest; scored by the
// memory beyond capacity, it repairs a rounding that does not fit.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_LOCALSEARCH_H
#define WEFT_LIB_RATIO_LOCALSEARCH_H

#include "weft/Ratio/Integerize.h"

namespace weft {
namespace ratio {

/// Improves `plan` (sizes valid, within memory) in place; never makes it
/// worse, stops after `maxMoves` accepted moves. Returns its cost.
double improveLocally(const RatioProblem &problem, IntegerPlan &plan,
                      unsigned maxMoves = 10000);

/// Moves alignment units of `plan` (sizes valid) between classes, each
/// move the one that lowers the memory beyond capacity the most (summed
/// over classes, relative to capacity), until every class fits, no move
/// helps, or `maxMoves` moves. Returns what is left of the overflow (0:
/// the plan fits). The fallback when Z3 gives up on a rounding that does
/// not fit.
double repairMemory(const RatioProblem &problem, IntegerPlan &plan,
                    unsigned maxMoves = 10000);

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_LOCALSEARCH_H
