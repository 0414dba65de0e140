//===- Synthesize.h - A plan for a graph program on a cluster -----*- C++
//-*-===//
//
// The synthesizer's entry point (docs/Design.md §4, docs/Synthesis.md): builds
// the search space at ratios proportional to device speed, searches it (A*,
// repeated blocks memoised), builds the plan with the program builder
// (include/weft/Spmd/ProgramBuilder.h) and scores it with the evaluator.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_SYNTHESIZE_H
#define WEFT_SYNTH_SYNTHESIZE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace weft {

/// The search budget used when the caller sets neither maxExpansions nor
/// timeLimitSeconds (docs/Synthesis.md): the search stops there and returns
/// its best plan with `capped` and the proven gap.
constexpr uint64_t kDefaultMaxExpansions = 150000;
/// Wall-clock backstop of the default budget, seconds, for each search (the
/// expansion limits and the hopeless-search stop normally end it first).
constexpr double kDefaultTimeLimitSeconds = 20;
/// Always applied unless SynthOptions::maxStateBytes says otherwise: the
/// estimated bytes of the search's tables (1 GiB; the process's resident
/// size is larger: MLIR, the plans and the block memo come on top).
constexpr uint64_t kDefaultMaxStateBytes = uint64_t(1) << 30;

/// The file name (without `.mlir`) of the IR after synthesis stage `stage`
/// (1-based), as `weftc --dump-dir` and `spmd-synthesis-pipeline{dump-dir}`
/// write it: "01-graph", "02-search", ...
std::string stageDumpName(unsigned stage, llvm::StringRef name);

/// Switches and limits of synthesize().
struct SynthOptions {
  enum class Heuristic { Admissible, Zero } heuristic = Heuristic::Admissible;
  /// Memoise repeated blocks (false: one A* over the whole program).
  bool memo = true;
  /// Activation recomputation among the choices (docs/Synthesis.md
  /// "Recomputation"): Auto offers it when no plan fits memory without it.
  enum class Recompute { Auto, Always, Never } recompute = Recompute::Auto;
  /// Keep the ratios proportional to device speed (no alternation with the
  /// ratio LP).
  bool fixedRatios = false;
  /// Alternation: search again at the LP's ratios only when the LP moved
  /// some class's ratio by at least this fraction from the ratios the last
  /// search ran at (0: whenever the cost strictly improved). A heuristic
  /// (docs/Synthesis.md "Alternation").
  double minRatioMove = 0.05;
  /// Stop the search after this many seconds (0: none).
  double timeLimitSeconds = 0;
  /// Stop the search after this many expansions (0: none).
  uint64_t maxExpansions = 0;
  /// Stop a search whose tables are estimated at this many bytes
  /// (0: kDefaultMaxStateBytes).
  uint64_t maxStateBytes = 0;
  /// Integer shard sizes are multiples of this.
  int64_t align = 1;
  EvalOptions eval;
  /// Progress lines (searches over 1 s), without a trailing newline.
  std::function<void(llvm::StringRef)> progress;
  /// Called with the plan after each stage: "search", "assign-ratios",
  /// "select-collectives" (once per alternation round; the last call of a
  /// stage wins for a dump directory) and "integerize".
  std::function<void(llvm::StringRef stage, mlir::ModuleOp plan)> dump;
};

/// The search's own figures.
struct SynthStats {
  double wallSeconds = 0;
  uint64_t expansions = 0;
  /// (incumbent − best f on the open list) / incumbent; 0 when finished.
  double gap = 0;
  /// A limit (expansions or time) stopped the search.
  bool capped = false;
  /// Rounds of A* → ratio LP done (0 with fixedRatios).
  unsigned alternations = 0;
  /// Why the alternation stopped before it converged ("" when it did, or
  /// ran out of rounds): the stage and its error.
  std::string alternationStop;
};

/// One collective inserted before an op.
struct ExplainCollective {
  /// The graph value moved ("" when unnamed) and its distributions.
  std::string value, from, to;
  /// Collectives in the relayout.
  unsigned count = 0;
  /// Largest per-device bytes of one collective.
  double bytes = 0;
  /// Forward + dual seconds on the slowest device.
  double seconds = 0;
};

/// One op of the plan.
struct ExplainRow {
  /// The graph op's name, e.g. "graph.matmul", and its result's location.
  std::string op, location;
  /// Per mesh axis variant names joined by ", ".
  std::string variant;
  /// Its forward is recomputed in the backward pass.
  bool recompute = false;
  /// Operand and result distributions.
  std::vector<std::string> operands, results;
  std::vector<ExplainCollective> collectives;
  /// The step's compute and communication (max over devices), seconds.
  double computeSeconds = 0, commSeconds = 0;
};

/// A synthesized plan.
struct SynthResult {
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  /// g of the found program at its ratios (the search's own step time).
  double searchStepSeconds = 0;
  /// The evaluator's step time of the built plan.
  double evaluatedStepSeconds = 0;
  SynthStats stats;
  /// The ratio LP's objective at its continuous optimum for the final plan
  /// (seconds per step; none with fixedRatios and align 1, where the plan
  /// keeps the builder's sizes).
  std::optional<double> continuousStepSeconds;
  /// The same objective at the final integer sizes (Z3).
  std::optional<double> integerStepSeconds;
  /// One row per plan op, in the search's order.
  std::vector<ExplainRow> explain;
};

namespace synth {
class SearchSpace;
struct StepChoice;
} // namespace synth

/// The verified plan of a choice per position of `space` (built from
/// `graph`), as synthesize() writes it before ratios and integer sizes.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildPlanOf(synth::SearchSpace &space, mlir::ModuleOp graph,
            llvm::ArrayRef<synth::StepChoice> choices);

/// Synthesizes a plan for `graph` (a graph module with @main) on `spec`.
/// Errors: exit 2 when no plan fits memory (naming the device lacking the
/// most memory under the best plan found, and by how much) or when a limit
/// is hit with no plan found; exit 1 for bad input.
llvm::Expected<SynthResult> synthesize(mlir::ModuleOp graph,
                                       const ClusterSpec &spec,
                                       const SynthOptions &options);

} // namespace weft

#endif // WEFT_SYNTH_SYNTHESIZE_H
