//===- PlanChoice.h - Which plan is written, and when to accumulate -*- C++
//-*-===//
//
// The decisions a user relies on after the search, made here so that weftc
// and the spmd-synthesize pass make them alike (docs/Synthesis.md "What is
// written"):
// - the written plan is the search's, unless a baseline re-evaluated the
//   same way (gradient-sync overlap) is faster and fits, or the search's
//   plan does not fit and a baseline does;
// - gradient accumulation: when no plan fits memory at the whole batch,
//   one micro-batch of the step is synthesised and run several times.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_PLANCHOICE_H
#define WEFT_SYNTH_PLANCHOICE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace weft {

/// A candidate plan other than the search's (a baseline), by name.
struct CandidatePlan {
  std::string name;
  mlir::ModuleOp plan;
};

struct ChosenPlan {
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  /// The written plan's estimate (gradient-sync overlap).
  PlanEstimate estimate;
  /// "search", or the name of the candidate written instead.
  std::string source = "search";
  /// The search's plan's own estimate.
  PlanEstimate searchEstimate;
  /// Every candidate's estimate, in order.
  std::vector<std::pair<std::string, PlanEstimate>> candidates;
};

/// Evaluates the search's `plan` and every candidate with gradient-sync
/// overlap and keeps the one to write: the search's, unless a candidate
/// that fits is faster, or the search's plan does not fit and a candidate
/// does. The kept plan may still not fit (`estimate.fits`; shortOfMemory
/// says why). Errors: the evaluator's.
llvm::Expected<ChosenPlan> choosePlan(mlir::OwningOpRef<mlir::ModuleOp> plan,
                                      llvm::ArrayRef<CandidatePlan> candidates,
                                      const ClusterSpec &spec,
                                      const EvalOptions &options);

/// The memory shortfall (exit 2) of a plan that does not fit, naming the
/// device short of the most bytes.
llvm::Error shortOfMemory(const PlanEstimate &estimate,
                          const EvalOptions &options);

/// The micro-batch counts to try, in order, for a `--micro-batches` value:
/// - "N": {N}; N must divide `batch` and leave at least one sample per
///   device, and N > 1 needs a symbolic batch dim (`batchSymbolic`);
/// - "auto": 1, then 2, 4, 8, ... while those hold (only 1 when the batch
///   is not symbolic).
/// Errors: bad input (exit 1) naming the flag.
llvm::Expected<std::vector<int64_t>> microBatchCounts(llvm::StringRef flag,
                                                      int64_t batch,
                                                      unsigned devices,
                                                      bool batchSymbolic);

/// Runs `attempt(m)` for the counts in order until one succeeds. After a
/// memory shortfall the next count is tried, skipping those that cannot
/// cover the shortfall (activations shrink at most in proportion to the
/// micro-batch; the last count is always tried), and `progress` is told
/// why; any other error, or a shortfall at the last count, is returned.
llvm::Error
withAccumulation(llvm::ArrayRef<int64_t> counts, int64_t batch,
                 llvm::function_ref<llvm::Error(int64_t)> attempt,
                 llvm::function_ref<void(llvm::StringRef)> progress);

} // namespace weft

#endif // WEFT_SYNTH_PLANCHOICE_H
