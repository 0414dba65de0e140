//===- RestartCost.h - Reconfiguration cost and per-policy values -*- C++ -*-//
//
// A job that (re)starts after a preemption, migration, resize or failure
// pays min(cap, base + per-GPU x GPUs) seconds before it progresses; what a
// round cannot hold is carried over to the next round while the job keeps
// its GPUs. Each term may differ per policy: `--restart-cost 10,crius=30`.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_RESTARTCOST_H
#define WEFT_SCHED_RESTARTCOST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <limits>
#include <map>
#include <string>

namespace weft {
namespace sched {

/// The seconds a (re)start costs.
struct RestartCost {
  double baseS = 10;
  double perGpuS = 0;
  /// Upper bound on the cost; infinity = none.
  double capS = std::numeric_limits<double>::infinity();
  /// The cost of restarting on `gpus` GPUs.
  double seconds(unsigned gpus) const;
};

/// A value with per-policy overrides: "V[,POLICY=V...]".
struct PerPolicyValue {
  double fallback = 0;
  std::map<std::string, double> byPolicy;
  /// The value for `policy` (its override, else the fallback).
  double get(llvm::StringRef policy) const;
};

/// Parses "V[,POLICY=V...]" for flag `--flag`: every value a finite number
/// >= 0 (or, with `allowNone`, "none" for infinity), every policy one of
/// knownPolicies(), each at most once; the fallback may be left out (then
/// `fallback`). Bad input names the flag.
llvm::Expected<PerPolicyValue> parsePerPolicyValue(llvm::StringRef flag,
                                                   llvm::StringRef text,
                                                   double fallback,
                                                   bool allowNone = false);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_RESTARTCOST_H
