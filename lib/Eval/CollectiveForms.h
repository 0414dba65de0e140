//===- CollectiveForms.h - Collective times as forms of the ratios -*- C++
//-*-===//
//
// Private to lib/Eval (the plan's ratio problem, RatioFromPlan.cpp): the
// collective times of lib/Cost written as forms of the members' byte counts.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EVAL_COLLECTIVEFORMS_H
#define WEFT_LIB_EVAL_COLLECTIVEFORMS_H

#include "weft/Cluster/ClusterSpec.h"
#include "weft/Cost/Collective.h"
#include "weft/Eval/CollectivePricer.h"
#include "weft/Ratio/Forms.h"
#include "weft/Spmd/Duals.h"
#include "llvm/ADT/StringMap.h"
#include <string>

namespace weft {
namespace ratio {

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
                   llvm::ArrayRef<LinearCost> bytes, CollectiveVariant choice);
  /// Set when a choice was made at the current ratios.
  bool linearized = false;

private:
  Form compute(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
               llvm::ArrayRef<LinearCost> bytes, CollectiveVariant choice);
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

#endif // WEFT_LIB_EVAL_COLLECTIVEFORMS_H
