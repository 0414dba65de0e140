//===- LinearProgram.h - A small GLPK wrapper --------------------*- C++
//-*-===//
//
// The only code of lib/Sched that includes glpk.h. Columns and rows are
// collected first and loaded into GLPK in one call.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SCHED_LINEARPROGRAM_H
#define WEFT_LIB_SCHED_LINEARPROGRAM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <limits>
#include <vector>

namespace weft {
namespace sched {

class LinearProgram {
public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  /// Adds a column with bounds [lb, ub] and objective coefficient `obj`.
  unsigned addVariable(double lb, double ub, double obj);
  /// Adds lb <= Σ coeff * x <= ub (either bound may be infinite).
  void addRow(llvm::ArrayRef<std::pair<unsigned, double>> coeffs, double lb,
              double ub);
  /// Maximises the objective; the values of the columns.
  llvm::Expected<std::vector<double>> maximize() const;
  unsigned numVariables() const { return colLb.size(); }

private:
  std::vector<double> colLb, colUb, colObj;
  std::vector<double> rowLb, rowUb;
  std::vector<int> entryRow, entryCol;
  std::vector<double> entryValue;
};

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_LINEARPROGRAM_H
