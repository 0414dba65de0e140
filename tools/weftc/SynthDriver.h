//===- SynthDriver.h - weftc -o: synthesise, compare, write --------*- C++
//-*-===//
//
// Runs the synthesizer (or takes its plan from the plan cache), re-evaluates
// the plan with gradient-sync overlap, compares it with the baselines, and
// writes DIR/plan.mlir and DIR/plan.json; prints a summary and, with
// --explain, the per-op table.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_SYNTHDRIVER_H
#define WEFT_TOOLS_WEFTC_SYNTHDRIVER_H

#include "BaselineReport.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include <functional>

namespace weft {

/// weftc's synthesis flags.
struct SynthFlags {
  explicit SynthFlags(llvm::cl::OptionCategory &category);
  llvm::cl::opt<std::string> heuristic, recompute, microBatches, stages;
  llvm::cl::opt<bool> noMemo, fixedRatios, explain, noCache;
  llvm::cl::opt<double> timeLimit, searchMemory, minRatioMove, bucketMb;
  llvm::cl::opt<uint64_t> maxExpansions;
  llvm::cl::opt<int64_t> align;
  llvm::cl::opt<std::string> dumpDir;
};

/// With --bucket-mb, sets `graph`'s `spmd.gradient_bucket_bytes` (plans
/// built from it keep it; the evaluator, the search and the emitted program
/// read it). Errors (exit 1): a negative size.
llvm::Error applyBucketFlag(const SynthFlags &flags, mlir::ModuleOp graph);

/// The synthesizer's options of `flags`. Errors (exit 1): bad values.
llvm::Expected<SynthOptions> synthOptionsOf(const SynthFlags &flags,
                                            const EvalOptions &eval);

/// What the driver needs from weftc.
struct SynthInputs {
  mlir::ModuleOp graph;
  const ClusterSpec &spec;
  /// Text of the cluster spec file (part of the cache key).
  std::string clusterText;
  EvalOptions eval;
  /// Context of the written plan (model, cluster, batch, bound, baselines).
  PlanContext context;
  /// The baselines of `graph`, asked for only once there is a plan to
  /// compare them with (a synthesis short of memory moves on without them).
  std::function<llvm::Expected<const std::vector<BaselineRow> *>()> baselines;
};

/// Synthesises and writes `outDir`/plan.{mlir,json}. Errors carry their
/// exit code (1 bad flags, 2 no plan within memory or limits).
llvm::Error synthesizeAndWrite(const SynthFlags &flags,
                               const SynthInputs &inputs,
                               llvm::StringRef outDir, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_SYNTHDRIVER_H
