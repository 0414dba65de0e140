//===- Objective.h - The step-cost objective at given ratios -----*- C++
//-*-===//
//
// The true objective of docs/Design.md §4–5 evaluated in double precision: the
// reference the LP, Integerize and the tests are measured against.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_OBJECTIVE_H
#define WEFT_RATIO_OBJECTIVE_H

#include "weft/Ratio/RatioProblem.h"

namespace weft {
namespace ratio {

/// Per-step times at some ratios.
struct StepTimes {
  /// max over classes of compute (seconds), one per step.
  std::vector<double> compute;
  /// max over classes (and nodes) of communication (seconds), one per step.
  std::vector<double> comm;
  /// Σ_k mult_k·(compute_k + comm_k) in seconds.
  double total = 0;
};

/// Evaluates every step where devices of one class may hold different shares:
/// a term with a non-negative coefficient reads `high` (the largest share in
/// the class), a negative one reads `low`. This bounds the slowest device from
/// above and is exact when `high == low`.
StepTimes evaluateSteps(const RatioProblem &problem, const Ratios &high,
                        const Ratios &low);

/// The objective Σ_k mult_k·(max_c compute + max_c comm) at `ratios`.
double evaluateObjective(const RatioProblem &problem, const Ratios &ratios);

/// Bytes per device of class `c` (same high/low reading as evaluateSteps);
/// zero when the problem has no memory rows.
double evaluateMemory(const RatioProblem &problem, unsigned c,
                      const Ratios &high, const Ratios &low);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_OBJECTIVE_H
