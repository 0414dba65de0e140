//===- Search.h - A* and the block-memoised DP -----------------*- C++ -*-===//
//
// docs/Design.md §4 and docs/Synthesis.md: A* over a SearchSpace at fixed
// ratios (lib/Synth/AStar.cpp): g = Σ step costs, h = the space's state
// bound (SearchSpace::heuristic(p, key): the op cost floors and the tree
// bound charged from what the state holds, never below the summed cheapest
// compute; lib/Synth/TreeBound.cpp), memory-capacity pruning, dominance on
// (position, held distributions) with no more cost and no more memory,
// greedy, seed and beam incumbents, deterministic ties, and the stop rules
// of lib/Synth/SearchBudget.h. The same search with repeated blocks
// memoised (lib/Synth/BlockMemo.cpp): the order is cut where the live set is
// smallest, each interval is solved exhaustively from each entry state once
// per structural hash, and an outer dynamic program joins the intervals.
// Seeds (Seeds.cpp), the beam (Beam.cpp), local improvement
// (LocalSearch.cpp) and replay (Replay.cpp) complete it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_SEARCH_H
#define WEFT_SYNTH_SEARCH_H

#include "weft/Synth/SearchSpace.h"
#include <functional>
#include <memory>

namespace weft::synth {

/// What a search found.
struct SearchOutcome {
  bool found = false;
  /// g of the plan found (seconds per step at the fixed ratios).
  double cost = 0;
  /// One choice per position.
  std::vector<StepChoice> choices;
  /// Peak memory per representative under the plan (committed + largest
  /// transient), bytes.
  RepVector peakMemory;
  uint64_t expansions = 0;
  double wallSeconds = 0;
  /// Best f on the open list when stopped (cost when finished).
  double lowerBound = 0;
  /// (cost − lowerBound) / cost; 0 when the search finished.
  double gap = 0;
  /// A limit stopped the search.
  bool capped = false;
  /// The stop was limits.stopWhenHopeless (capped is set too).
  bool hopeless = false;
  /// Estimated peak bytes of the search's tables.
  uint64_t stateBytes = 0;
  /// The memoised search finished and gave this plan (false: plain A*).
  bool memoised = false;
  /// Expansions the memoised search spent, finished or not (counted in
  /// `expansions` too).
  uint64_t memoExpansions = 0;
};

/// Limits and switches of one search.
struct SearchLimits {
  /// Use the admissible state bound as h; false: h = 0 (uniform cost).
  bool admissible = true;
  /// Memoise repeated blocks (outer DP); false: one A* over the program.
  bool memo = true;
  /// Stop after this many expansions (0: none).
  uint64_t maxExpansions = 0;
  /// Stop after this many seconds (0: none).
  double timeLimitSeconds = 0;
  /// Stop when the search's own tables (states, keys, open list, duplicate
  /// index) are estimated to hold this many bytes (0: none).
  uint64_t maxStateBytes = 0;
  /// Prune states over memory capacity (false: find the best plan ignoring
  /// memory, to report the shortfall).
  bool memoryPruning = true;
  /// Stop the plain A* early when, at four times the rate its bound rose
  /// over the last doubling of its expansions, the bound would not reach
  /// the incumbent within maxExpansions (docs/Synthesis.md "Budgets and
  /// stop rules"). Judged on expansions only, so the stop is deterministic.
  /// synthesize() sets it when no limit was given.
  bool stopWhenHopeless = false;
  /// With memo and stopWhenHopeless: the plain A* tries first on the memo's
  /// share of maxExpansions; the memo runs only when it does not close
  /// there (docs/Synthesis.md "Budgets and stop rules"). synthesize() sets it
  /// with stopWhenHopeless.
  bool plainFirst = false;
  /// The expansions the plain A* plans for when maxExpansions stops it
  /// earlier (0: maxExpansions): its hopeless rule and its beam judge by
  /// them, so a first try on a share of the budget stops as hopeless only
  /// when the whole budget would not close it.
  uint64_t horizon = 0;
  /// Called about once a second once a search has run for 1 s.
  std::function<void(llvm::StringRef)> progress;
  /// Incumbent plans (improvedSeedPlans), computed once by search() or
  /// searchAStar() and shared by the searches they run; null: computed
  /// there.
  std::shared_ptr<const std::vector<SearchOutcome>> seeds;
};

/// Per op the option that leaves the fullest device least full (committed
/// plus transient over capacity), then the cheapest step: a plan near the
/// memory floor when data parallelism does not fit. None when impossible or
/// over memory (with memoryPruning).
std::optional<SearchOutcome> leastMemorySeed(SearchSpace &space,
                                             bool memoryPruning = true);

/// Data parallel across mesh nodes with parameters split inside them where
/// an option allows (as TP-DP): per op the option that keeps the most
/// activation operands split on dim 0 along the node axis, then splits the
/// most parameter operands along the local axes, then the cheapest step.
/// None on a mesh without a local axis, or when impossible or over memory.
std::optional<SearchOutcome> tensorParallelSeed(SearchSpace &space,
                                                bool memoryPruning = true);

/// Every seed that exists: the two data-parallel seeds, the least-memory
/// seed and the tensor-parallel seed, in that order.
std::vector<SearchOutcome> seedPlans(SearchSpace &space,
                                     bool memoryPruning = true);

/// A beam search over the positions keeping the `width` cheapest states per
/// position (duplicates merged): an incumbent, not an optimum. None when
/// every state dies. Adds the states expanded to `*expansions`.
std::optional<SearchOutcome> beamSeed(SearchSpace &space, unsigned width,
                                      bool memoryPruning = true,
                                      uint64_t *expansions = nullptr);

/// A plan that always exists when any data-parallel plan fits: per op the
/// option that keeps the most activation dims split on dim 0 (the batch),
/// splits parameters least, then the cheapest step; parameters replicated
/// (`minMemory` false) or in their least-memory storage (true). None when it
/// is impossible or over memory (with limits.memoryPruning).
std::optional<SearchOutcome>
dataParallelSeed(SearchSpace &space, bool minMemory, bool memoryPruning = true);

/// Local improvement of a complete plan (docs/Synthesis.md): position by
/// position, every other choice with the rest of the plan kept, the suffix
/// replayed; the best change that lowers the cost within memory is kept,
/// sweeping until a sweep changes nothing or `maxSteps` transitions (0: no
/// limit) are spent. `plan` is updated only when its cost drops (a plan over
/// memory is left as it is when `memoryPruning`). Returns the transitions
/// spent.
uint64_t improvePlan(SearchSpace &space, SearchOutcome &plan,
                     bool memoryPruning = true, uint64_t maxSteps = 0);

/// Transitions one local improvement may spend by default (10 M: about
/// 1.4 s on BERT-12 / hap-64).
constexpr uint64_t kDefaultImproveSteps = 10'000'000;

/// seedPlans, each improved locally, cheapest first, within one budget of
/// `maxSteps` transitions; sorted by cost.
std::vector<SearchOutcome>
improvedSeedPlans(SearchSpace &space, bool memoryPruning = true,
                  uint64_t maxSteps = kDefaultImproveSteps);
/// `seeds` (seedPlans of `space`) improved as improvedSeedPlans does, for a
/// caller that keeps the unimproved seeds too.
std::vector<SearchOutcome>
improveSeeds(SearchSpace &space, std::vector<SearchOutcome> seeds,
             bool memoryPruning = true,
             uint64_t maxSteps = kDefaultImproveSteps);

/// Plain A* over the whole program.
SearchOutcome searchAStar(SearchSpace &space, const SearchLimits &limits);

/// Blocks memoised (limits.memo decides; searchAStar when false).
SearchOutcome search(SearchSpace &space, const SearchLimits &limits);

/// Replays `choices` from the start: the total cost, or none when a step is
/// impossible. Fills one detail per position when `details` is given.
std::optional<double> replay(SearchSpace &space,
                             llvm::ArrayRef<StepChoice> choices,
                             std::vector<StepDetail> *details = nullptr,
                             RepVector *peakMemory = nullptr);

} // namespace weft::synth

#endif // WEFT_SYNTH_SEARCH_H
