//===- Integerize.h - Integer shard sizes (Z3) -------------------*- C++
//-*-===//
//
// Turns LP ratios into integer shard sizes per segment and device
// (docs/Design.md §5): sizes are multiples of the segment's alignment (and of
// --align where it divides the extent), sum to the extent, devices of one class
// differ by at most one alignment unit, and the same objective as the LP is
// minimised with Z3, starting from a largest-remainder rounding of the LP
// ratios.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_INTEGERIZE_H
#define WEFT_RATIO_INTEGERIZE_H

#include "weft/Ratio/SolveRatios.h"

namespace weft {
namespace ratio {

struct IntegerizeOptions {
  /// `--align N`: shard sizes are also multiples of N on every segment whose
  /// extent N·(segment alignment) divides; 1: off.
  int64_t align = 1;
  /// Z3 resource limit per independent component (deterministic; never a
  /// wall-clock limit). When it is reached the incumbent is kept and the plan
  /// is not proved optimal. The plans of the synthesis table
  /// (docs/benchmarks.md) finish within 54,000-400,000; GPT-96 on
  /// mixed-256 ends unknown at 1,000,000 as at this limit (docs/Ratios.md).
  unsigned resourceLimit = 500000;
  /// Base sizes stay within this many alignment units of the LP's per-device
  /// target (0: anywhere). If no sizes in the window fit in memory, the
  /// search is repeated without it.
  int64_t window = 2;
};

/// Integer shard sizes of every device.
struct IntegerPlan {
  /// sizes[s][c][i]: elements of segment s held by device i of class c.
  std::vector<std::vector<std::vector<int64_t>>> sizes;
  /// The alignment unit used per segment.
  std::vector<int64_t> units;
  /// Objective at the LP ratios (seconds).
  double continuousCost = 0;
  /// Objective at the integer sizes divided by the extents, devices of a
  /// class read at their largest share for growing terms and their smallest
  /// for shrinking ones (seconds).
  double integerCost = 0;
  /// Objective of the largest-remainder rounding of the LP ratios (seconds;
  /// infinite when that rounding exceeds memory).
  double roundedCost = 0;
  /// Z3 proved the sizes optimal (false: resource limit, best found kept).
  bool provedOptimal = false;
};

/// The alignment unit of a segment under the options: lcm(segment alignment,
/// align) when it divides the extent, else the segment's own alignment.
int64_t alignmentUnit(const Segment &segment, const IntegerizeOptions &options);

/// Largest-remainder rounding of `ratios` at device level (the incumbent).
IntegerPlan roundLargestRemainder(const RatioProblem &problem,
                                  const Ratios &ratios,
                                  const IntegerizeOptions &options);

/// The largest (`high`) and smallest (`low`) share per (segment, class) of a
/// plan: sizes divided by the extent.
std::pair<Ratios, Ratios> planShares(const RatioProblem &problem,
                                     const IntegerPlan &plan);

/// Integer sizes minimising the objective. Errors: bad input (problem or
/// options), infeasible (no integer sizes fit in memory: names the class when
/// dropping its memory row alone makes sizes exist), internal (Z3 failed).
llvm::Expected<IntegerPlan> integerize(const RatioProblem &problem,
                                       const RatioSolution &solution,
                                       const IntegerizeOptions &options = {});

/// Checks every constraint of a finished plan with Z3 (exact rational
/// arithmetic): shape, non-negativity, alignment, devices of one class within
/// one unit, sums equal to the extents, memory per class. Returns the first
/// violated constraint as a verification error (exit code 3).
llvm::Error checkIntegerPlan(const RatioProblem &problem,
                             const IntegerPlan &plan,
                             const IntegerizeOptions &options = {});

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_INTEGERIZE_H
