//===- PlanForms.h - Costs of a plan as functions of the ratios --*- C++
//-*-===//
//
// Private to lib/Ratio (ratioProblemFromPlan): convex piecewise-linear cost
// forms (linear part + Σ max terms) and the collective times of lib/Cost
// written as such forms of the members' byte counts.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_PLANFORMS_H
#define WEFT_LIB_RATIO_PLANFORMS_H

#include "weft/Cluster/ClusterSpec.h"
#include "weft/Cost/Collective.h"
#include "weft/Ratio/RatioProblem.h"
#include "weft/Spmd/Duals.h"
#include "llvm/ADT/StringMap.h"
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

/// How a collective runs (the ops' `algorithm` and `mode`).
struct CollectiveChoice {
  AllReduceAlgo algo = AllReduceAlgo::Ring;
  /// The faster of ring and hierarchical (gradient sync), chosen at `at`.
  bool bestAllReduce = false;
  UnevenVariant uneven = UnevenVariant::Padded;
};

/// Collective times of weft/Cost/Collective.h as forms of the members'
/// bytes, memoised per (kind, choice, group, bytes).
class CollectiveForms {
public:
  CollectiveForms(const ClusterSpec &spec, const CollectiveOptions &options,
                  const Ratios &at)
      : spec(spec), options(options), at(at) {}

  /// Seconds of `kind` on `group` (cluster ids, node-major) where member i
  /// contributes `bytes[i]`, as a form.
  const Form &time(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
                   llvm::ArrayRef<LinearCost> bytes, CollectiveChoice choice);
  /// Set when a choice was made at the current ratios.
  bool linearized = false;

private:
  Form compute(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
               llvm::ArrayRef<LinearCost> bytes, CollectiveChoice choice);
  /// max over nodes of the group of Σ bytes held outside / NIC bandwidth.
  void addNicPieces(llvm::SmallVector<LinearCost, 2> &pieces,
                    llvm::ArrayRef<unsigned> group,
                    llvm::ArrayRef<LinearCost> bytes);
  /// Latency and per-resource load / capacity pieces of one round.
  llvm::SmallVector<LinearCost, 2>
  roundPieces(llvm::ArrayRef<std::pair<unsigned, unsigned>> links,
              llvm::ArrayRef<LinearCost> bytes, double &latency);

  const ClusterSpec &spec;
  CollectiveOptions options;
  const Ratios &at;
  llvm::StringMap<Form> memo;
};

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_PLANFORMS_H
