//===- SolveRatios.h - The sharding-ratio LP (GLPK) --------------*- C++
//-*-===//
//
// Chooses one ratio per (segment, device class) minimising
// Σ_k mult_k·(C_k + M_k) subject to compute_{k,c}(B) ≤ C_k,
// comm_{k,c}(B) ≤ M_k, Σ_c count_c·B_{s,c} = 1 and memory_c(B) ≤ capacity_c
// (docs/Design.md §5; docs/Ratios.md writes the LP out). Constants stay in the
// rows.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_SOLVERATIOS_H
#define WEFT_RATIO_SOLVERATIOS_H

#include "weft/Ratio/RatioProblem.h"

namespace weft {
namespace ratio {

/// Bounds every free ratio to [center − radius, center + radius] (clipped to
/// [0, 1/count]): the region where linearised pieces (all-to-all between two
/// segments) are trusted.
struct TrustRegion {
  Ratios center;
  double radius = 0.1;
};

struct LpOptions {
  /// Simplex iteration limit (never a wall-clock limit: results are
  /// deterministic).
  int iterationLimit = 200000;
  std::optional<TrustRegion> trustRegion;
};

struct RatioSolution {
  /// [segment][class], share of the segment per device of the class.
  Ratios ratios;
  /// Σ_k mult_k·(C_k + M_k) at the optimum, in seconds.
  double objectiveSeconds = 0;
  /// Per original step: C_k and M_k at the optimum (seconds).
  std::vector<double> stepCompute, stepComm;
  /// LP size, for reports.
  unsigned numDistinctSteps = 0, numRows = 0, numColumns = 0;
};

/// Solves the LP. Errors: bad input (check() failed, or a trust region whose
/// ratios cannot sum to one), infeasible (ExitInfeasible: no ratios fit in
/// memory — the message names the class that lacks memory — or the
/// iteration limit was reached), internal (GLPK failed).
llvm::Expected<RatioSolution> solveRatios(const RatioProblem &problem,
                                          const LpOptions &options = {});

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_SOLVERATIOS_H
