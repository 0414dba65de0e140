//===- Forms.h - Convex piecewise-linear forms of the ratios ------*- C++
//-*-===//
//
// Arithmetic on the ratio problem's cost expressions: linear costs and forms
// (a linear part + Σ max terms), in which the plan's ratio problem
// (weft/Eval/RatioFromPlan.h) writes every per-device quantity.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_FORMS_H
#define WEFT_RATIO_FORMS_H

#include "weft/Ratio/RatioProblem.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace weft {
namespace ratio {

/// constant + Σ coef·B with terms merged and sorted.
void canonicalize(LinearCost &cost);
/// into += k·from.
void addScaled(LinearCost &into, const LinearCost &from, double k = 1);
LinearCost scaledCost(const LinearCost &cost, double k);
LinearCost constantCost(double c);
double valueAt(const LinearCost &cost, const Ratios &at);
bool isZero(const LinearCost &cost);

/// lin + Σ maxes: a convex piecewise-linear function of the ratios.
struct Form {
  LinearCost lin;
  llvm::SmallVector<MaxCost, 1> maxes;

  bool empty() const { return isZero(lin) && maxes.empty(); }
  void add(const Form &other);
  /// Adds scale·max(pieces): identically-zero pieces dropped, one piece
  /// folded into the linear part.
  void addMax(llvm::SmallVector<LinearCost, 2> pieces, double scale = 1);
  /// Multiplies the form by k ≥ 0.
  void scale(double k);
  double valueAt(const Ratios &at) const;
  /// Equal keys: equal functions.
  std::string key() const;
};

/// Term by term equal in the same order (so equal functions; the converse
/// needs canonical keys).
bool identical(const LinearCost &a, const LinearCost &b);

/// max over `forms`: one form when all are equal; else the expansion into
/// one max term when it has at most `limit` pieces; else the form largest at
/// `at` (and `linearized` is set).
Form maxOfForms(llvm::ArrayRef<const Form *> forms, const Ratios &at,
                bool &linearized, unsigned limit = 512);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_FORMS_H
