//===- LocalSearch.cpp - Improving a complete plan one position at a time -===//
//
// docs/Synthesis.md "Local improvement": a capped A* leaves an incumbent that
// is often locally poor (one op whose variant forces a large relayout that a
// neighbouring variant avoids). improvePlan() tries, position by position,
// every other choice with the rest of the plan kept, replaying the suffix
// with the space's own transition function, and keeps a change that lowers
// the cost within memory. The result is a plan of the same space, never
// worse than the one given; its cost is exact (replayed), not estimated.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"

using namespace weft;
using namespace weft::synth;

namespace {
/// The plan's state before each position (prefix replay), and what the
/// plan's steps from each position on do to memory.
struct Prefix {
  std::vector<StateKey> keys;
  std::vector<double> g;
  std::vector<MemoryTally> memory;
  /// The plan's step at each position (its key moved to `keys`).
  std::vector<StepResult> steps;
  /// suffix[p]: the effect of the plan's steps p, p + 1, ... on a tally.
  std::vector<TallyEffect> suffix;
};

class Improver {
public:
  Improver(SearchSpace &space, bool memoryPruning, uint64_t budget)
      : space(space), memoryPruning(memoryPruning), budget(budget),
        reps(space.numReps()), end(space.numPositions()) {}

  /// Replays `choices` from position `from` (prefix valid up to it) into
  /// the prefix tables; false when impossible or over memory.
  bool rebuild(const std::vector<StepChoice> &choices, unsigned from) {
    for (unsigned p = from; p < end; ++p) {
      auto r = space.step(p, prefix.keys[p], choices[p]);
      ++steps;
      if (!r)
        return false;
      prefix.keys[p + 1] = std::move(r->next);
      prefix.g[p + 1] = prefix.g[p] + r->cost;
      prefix.memory[p + 1] = prefix.memory[p].after(*r);
      prefix.steps[p] = std::move(*r);
      if (!fits(prefix.memory[p + 1]))
        return false;
    }
    prefix.suffix[end] = TallyEffect(reps);
    for (unsigned p = end; p-- > 0;) {
      prefix.suffix[p] = prefix.suffix[p + 1];
      prefix.suffix[p].prepend(prefix.steps[p]);
    }
    return true;
  }

  /// The cost of the plan with `choice` at p and the current choices after
  /// it, or none when impossible, over memory or not below `bound`.
  std::optional<double> tryChoice(const std::vector<StepChoice> &choices,
                                  unsigned p, const StepChoice &choice,
                                  double bound) {
    StateKey key = prefix.keys[p];
    double g = prefix.g[p];
    MemoryTally memory = prefix.memory[p];
    for (unsigned q = p; q < end; ++q) {
      auto r = space.step(q, key, q == p ? choice : choices[q]);
      ++steps;
      if (!r)
        return std::nullopt;
      g += r->cost;
      if (g >= bound)
        return std::nullopt;
      memory.add(*r);
      if (!fits(memory))
        return std::nullopt;
      key = std::move(r->next);
      // Back on the plan's own state: the rest of the plan is the plan's
      // own steps, so it costs what it costs now, and it fits when the
      // tally it leaves (the plan's suffix effect applied to this tally)
      // does, since a peak never falls. Most trials rejoin within a layer,
      // often with a slightly different tally, and end here.
      if (key == prefix.keys[q + 1]) {
        double total = g + (prefix.g[end] - prefix.g[q + 1]);
        if (total >= bound ||
            (memoryPruning && !fits(prefix.suffix[q + 1].applyTo(memory))))
          return std::nullopt;
        return total;
      }
    }
    return g;
  }

  bool fits(const MemoryTally &memory) const {
    if (!memoryPruning)
      return true;
    for (unsigned i = 0; i < reps; ++i)
      if (memory.peak(i) > space.capacity()[i])
        return false;
    return true;
  }

  bool exhausted() const { return budget && steps >= budget; }

  SearchSpace &space;
  bool memoryPruning;
  uint64_t budget;
  unsigned reps, end;
  uint64_t steps = 0;
  Prefix prefix;
};
} // namespace

uint64_t weft::synth::improvePlan(SearchSpace &space, SearchOutcome &plan,
                                  bool memoryPruning, uint64_t maxSteps) {
  unsigned end = space.numPositions(), reps = space.numReps();
  if (!plan.found || plan.choices.size() != end)
    return 0;
  Improver im(space, memoryPruning, maxSteps);
  im.prefix.keys.assign(end + 1, {});
  im.prefix.g.assign(end + 1, 0);
  im.prefix.memory.assign(end + 1, MemoryTally(reps));
  im.prefix.steps.resize(end);
  im.prefix.suffix.resize(end + 1);
  std::vector<StepChoice> choices = plan.choices;
  if (!im.rebuild(choices, 0))
    return im.steps;
  double cost = im.prefix.g[end];
  // Sweeps until one changes nothing (or the budget ends); a change must
  // gain more than rounding.
  for (bool changed = true; changed && !im.exhausted();) {
    changed = false;
    for (unsigned p = 0; p < end && !im.exhausted(); ++p) {
      std::optional<StepChoice> best;
      double bestCost = cost * (1 - 1e-9);
      space.forEachChoice(p, [&](const StepChoice &c) {
        if (c == choices[p] || im.exhausted())
          return;
        if (auto g = im.tryChoice(choices, p, c, bestCost)) {
          bestCost = *g;
          best = c;
        }
      });
      if (!best)
        continue;
      choices[p] = *best;
      bool ok = im.rebuild(choices, p);
      assert(ok && "an accepted change replays");
      (void)ok;
      cost = im.prefix.g[end];
      changed = true;
    }
  }
  if (cost < plan.cost) {
    plan.cost = cost;
    plan.choices = std::move(choices);
    plan.peakMemory.clear();
    for (unsigned i = 0; i < reps; ++i)
      plan.peakMemory.push_back(im.prefix.memory[end].peak(i));
  }
  return im.steps;
}

std::vector<SearchOutcome> weft::synth::improvedSeedPlans(SearchSpace &space,
                                                          bool memoryPruning,
                                                          uint64_t maxSteps) {
  return improveSeeds(space, seedPlans(space, memoryPruning), memoryPruning,
                      maxSteps);
}

std::vector<SearchOutcome>
weft::synth::improveSeeds(SearchSpace &space, std::vector<SearchOutcome> seeds,
                          bool memoryPruning, uint64_t maxSteps) {
  llvm::stable_sort(seeds, [](const SearchOutcome &a, const SearchOutcome &b) {
    return a.cost < b.cost;
  });
  for (SearchOutcome &sd : seeds) {
    if (!maxSteps)
      break;
    maxSteps -=
        std::min(maxSteps, improvePlan(space, sd, memoryPruning, maxSteps));
  }
  llvm::stable_sort(seeds, [](const SearchOutcome &a, const SearchOutcome &b) {
    return a.cost < b.cost;
  });
  return seeds;
}
