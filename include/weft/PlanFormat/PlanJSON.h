//===- PlanJSON.h - A plan as plan.json (docs/PlanFormat.md) ------*- C++
//-*-===//
//
// Writes an `spmd` program, its estimate and how it was found as the JSON
// document other tools read (the emitter, the timeline, the scheduler's Cell
// oracle, scripts). The schema and its version are in docs/PlanFormat.md;
// every field that carries a number carries its unit in its name (`_s`,
// `_bytes`) and every modelled figure sits under an `estimate: true` object.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_PLANFORMAT_PLANJSON_H
#define WEFT_PLANFORMAT_PLANJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Eval/MeshLayout.h"
#include "llvm/Support/JSON.h"
#include <optional>
#include <string>
#include <vector>

namespace weft {

/// The version of the plan.json schema written by planToJSON.
constexpr int64_t kPlanFormatVersion = 1;

/// How the synthesizer found a plan.
struct SynthesisRecord {
  double wallSeconds = 0;
  uint64_t expansions = 0;
  /// Proven gap of the search at fixed ratios (0: optimal in its space).
  double gap = 0;
  /// The search stopped at --max-expansions.
  bool capped = false;
  /// A* / LP alternations run.
  unsigned alternations = 0;
  /// Step time of the ratio LP's continuous optimum and of the integer
  /// sizes, seconds (estimates), when the LP ran.
  std::optional<double> continuousStepSeconds, integerStepSeconds;
  /// The plan came from the cache.
  bool cached = false;
};

/// What a plan file records beyond the program and its estimate.
struct PlanContext {
  std::string model;
  std::string cluster;
  std::string dtype = "fp32";
  int64_t globalBatch = 0;
  /// Training FLOPs / peak FLOP/s of the cluster, seconds.
  double lowerBoundSeconds = 0;
  /// Each baseline's estimated step time, seconds, by name.
  std::vector<std::pair<std::string, double>> baselines;
  /// The search's own step time before any comparison with the baselines,
  /// seconds (estimate).
  std::optional<double> searchStepSeconds;
  /// Where the written plan came from: "search" or a baseline's name.
  std::string source = "search";
  std::optional<SynthesisRecord> synthesis;
};

/// The plan document. `layout` must belong to `plan`'s mesh.
llvm::json::Value planToJSON(mlir::ModuleOp plan, const MeshLayout &layout,
                             const PlanEstimate &estimate,
                             const PlanContext &context);

/// A distribution as text, e.g. "[gather(0, 0), id]".
std::string distToString(mlir::Attribute dist);

} // namespace weft

#endif // WEFT_PLANFORMAT_PLANJSON_H
