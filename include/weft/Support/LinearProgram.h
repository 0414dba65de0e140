//===- LinearProgram.h - The one wrapper around GLPK -------------*- C++
//-*-===//
//
// Every LP in Weft (the scheduler's Gavel policies, the ratio LP of
// docs/Design.md §5) is built through this class, so the rest of the code is
// solver-agnostic and GLPK's quirks (1-based arrays, repeated columns in a
// row, presolve failures) are handled once.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_LINEARPROGRAM_H
#define WEFT_SUPPORT_LINEARPROGRAM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <climits>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace weft {

class LinearProgram {
public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  enum class Sense { Minimize, Maximize };
  enum class Status { Optimal, Infeasible, Unbounded, IterationLimit, Failed };
  static llvm::StringRef toString(Status status);

  LinearProgram();
  ~LinearProgram();
  LinearProgram(const LinearProgram &) = delete;
  LinearProgram &operator=(const LinearProgram &) = delete;

  /// Adds a column lb <= x <= ub (bounds may be infinite) with objective
  /// coefficient `obj`; returns its index.
  unsigned addColumn(double lb, double ub, double obj);
  /// Adds a row lb <= Σ coef·x <= ub (repeated columns are summed); returns
  /// its index.
  unsigned addRow(llvm::ArrayRef<std::pair<unsigned, double>> coeffs, double lb,
                  double ub);

  /// Solves with the primal simplex, at most `iterationLimit` iterations (an
  /// iteration limit, never a wall-clock one: results are deterministic).
  /// Falls back to no presolve, then to the dual simplex, when GLPK fails
  /// numerically.
  Status solve(Sense sense, int iterationLimit = INT_MAX);
  Status minimize(int iterationLimit = INT_MAX) {
    return solve(Sense::Minimize, iterationLimit);
  }

  /// The column values of an optimal solve, or an internal error saying why
  /// there is none.
  llvm::Expected<std::vector<double>> optimum(Sense sense,
                                              int iterationLimit = INT_MAX);

  /// Value of a column after an optimal solve.
  double value(unsigned column) const { return values[column]; }
  double objective() const { return objectiveValue; }

  unsigned numColumns() const { return colLb.size(); }
  unsigned numRows() const { return rowLb.size(); }

private:
  struct Problem;
  std::unique_ptr<Problem> lp;
  std::vector<double> colLb, colUb, colObj, rowLb, rowUb;
  std::vector<int> entryRow, entryCol;
  std::vector<double> entryValue;
  std::vector<double> values;
  double objectiveValue = 0;
};

} // namespace weft

#endif // WEFT_SUPPORT_LINEARPROGRAM_H
