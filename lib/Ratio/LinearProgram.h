//===- LinearProgram.h - A tiny RAII wrapper around GLPK --------*- C++ -*-===//
//
// The only file of lib/Ratio that sees glpk.h (through LinearProgram.cpp):
// columns, rows and coefficients go in, a status and values come out. The
// solver runs with an iteration limit, never a wall-clock limit, and silent.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_LINEARPROGRAM_H
#define WEFT_LIB_RATIO_LINEARPROGRAM_H

#include "llvm/ADT/ArrayRef.h"
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace weft {
namespace ratio {

class LinearProgram {
public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  enum class Status { Optimal, Infeasible, Unbounded, IterationLimit, Failed };

  LinearProgram();
  ~LinearProgram();
  LinearProgram(const LinearProgram &) = delete;
  LinearProgram &operator=(const LinearProgram &) = delete;

  /// Adds a column lb <= x <= ub (bounds may be infinite) with objective
  /// coefficient `obj`; returns its index.
  unsigned addColumn(double lb, double ub, double obj);
  /// Adds a row lb <= Σ coef·x <= ub; returns its index.
  unsigned addRow(llvm::ArrayRef<std::pair<unsigned, double>> coeffs, double lb,
                  double ub);

  /// Minimises with the primal simplex, at most `iterationLimit` iterations.
  Status minimize(int iterationLimit);
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

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_LINEARPROGRAM_H
