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

#include "BlockClasses.h"
#include "weft/Synth/Search.h"
#include <algorithm>

using namespace weft;
using namespace weft::synth;

namespace {
/// In the sweeps over every position, a trial that has not rejoined the
/// plan's state within this many positions is given up (on GPT-96 /
/// mixed-256 such trials took half of a sweep's steps, and the plans were
/// as good when they were given up after 64).
constexpr unsigned kTrialSpan = 128;

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
  /// the prefix tables; false when impossible or over memory. Raises
  /// `lastChanged` to the last position whose state changed.
  bool rebuild(const std::vector<StepChoice> &choices, unsigned from) {
    for (unsigned p = from; p < end; ++p) {
      auto r = space.step(p, prefix.keys[p], choices[p]);
      ++steps;
      if (!r)
        return false;
      if (prefix.keys[p + 1] != r->next)
        lastChanged = std::max(lastChanged, p + 1);
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
  /// it, or none when impossible, over memory, not below `bound` or not
  /// back on the plan's state within `maxTrial` positions (0: no limit). Raises
  /// `reach` to the last position the trial looked at, and sets
  /// `memoryRejected` when memory rejected it.
  std::optional<double> tryChoice(const std::vector<StepChoice> &choices,
                                  unsigned p, const StepChoice &choice,
                                  double bound) {
    StateKey key = prefix.keys[p];
    double g = prefix.g[p];
    MemoryTally memory = prefix.memory[p];
    unsigned stop = maxTrial ? std::min(end, p + maxTrial) : end;
    for (unsigned q = p; q < stop; ++q) {
      reach = std::max(reach, q);
      auto r = space.step(q, key, q == p ? choice : choices[q]);
      ++steps;
      if (!r)
        return std::nullopt;
      g += r->cost;
      if (g >= bound)
        return std::nullopt;
      memory.add(*r);
      if (!fits(memory)) {
        memoryRejected = true;
        return std::nullopt;
      }
      key = std::move(r->next);
      // Back on the plan's own state: the rest of the plan is the plan's
      // own steps, so it costs what it costs now, and it fits when the
      // tally it leaves (the plan's suffix effect applied to this tally)
      // does, since a peak never falls. Most trials rejoin within a layer,
      // often with a slightly different tally, and end here.
      if (key == prefix.keys[q + 1]) {
        double total = g + (prefix.g[end] - prefix.g[q + 1]);
        if (total >= bound)
          return std::nullopt;
        if (memoryPruning && !fits(prefix.suffix[q + 1].applyTo(memory))) {
          memoryRejected = true;
          return std::nullopt;
        }
        return total;
      }
    }
    if (stop < end)
      return std::nullopt;
    reach = end;
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
  unsigned lastChanged = 0, reach = 0, maxTrial = 0;
  bool memoryRejected = false;
  Prefix prefix;
};

/// The sweeps of improvePlan over one plan (docs/Synthesis.md "Local
/// improvement"). Joint sweeps first: positions of the first block of each
/// class (and those of no repeated block) only; a change that gains there
/// is made in every block of the class that had the same choice, when the
/// whole plan then gains more than by the one change. Then sweeps over
/// every position. Sweeps repeat until one changes nothing (or the budget
/// ends); a change must gain more than rounding.
///
/// A position whose choices all failed to gain is not tried again until a
/// change could alter what its trials saw: a change at x whose states
/// differ up to y reopens the positions up to y whose trials reached x;
/// one that lowers the plan's peak memory on some device reopens the
/// positions that memory rejected.
class Sweeps {
public:
  Sweeps(SearchSpace &space, Improver &im, std::vector<StepChoice> &choices)
      : space(space), im(im), choices(choices), end(space.numPositions()),
        cost(im.prefix.g[end]), twins(end), follower(end, false), open(end),
        memoryRejected(end), reach(end) {
    findTwins();
  }

  /// Joint sweeps, then sweeps over every position; the plan's cost.
  double run() {
    for (bool joint : {true, false}) {
      std::fill(open.begin(), open.end(), 1);
      im.maxTrial = joint ? 0 : kTrialSpan;
      while (!im.exhausted() && sweep(joint)) {
      }
    }
    return cost;
  }

private:
  /// Repeated blocks (BlockClasses.h): for a position of the first block
  /// of its class, the same position in the class's other blocks.
  void findTwins() {
    for (const RepeatedBlocks &rb : repeatedBlocks(space))
      for (unsigned o = 0; o < rb.length; ++o)
        for (size_t k = 1; k < rb.starts.size(); ++k) {
          twins[rb.starts[0] + o].push_back(rb.starts[k] + o);
          follower[rb.starts[k] + o] = true;
        }
  }

  /// One sweep over the open positions; true when it changed the plan.
  bool sweep(bool joint) {
    bool changed = false;
    for (unsigned p = 0; p < end && !im.exhausted(); ++p) {
      if (!open[p] || (joint && follower[p]))
        continue;
      double bestCost = cost * (1 - 1e-9);
      std::optional<StepChoice> best = bestAt(p, bestCost);
      reach[p] = im.reach;
      memoryRejected[p] = im.memoryRejected;
      open[p] = im.exhausted();
      if (!best)
        continue;
      accept(p, *best, bestCost, joint);
      changed = true;
    }
    return changed;
  }

  /// The other choice at p that gains most below `bestCost` (lowered to
  /// its cost); none when none gains.
  std::optional<StepChoice> bestAt(unsigned p, double &bestCost) {
    std::optional<StepChoice> best;
    im.reach = p;
    im.memoryRejected = false;
    space.forEachChoice(p, [&](const StepChoice &c) {
      if (c == choices[p] || im.exhausted())
        return;
      if (auto g = im.tryChoice(choices, p, c, bestCost)) {
        bestCost = *g;
        best = c;
      }
    });
    return best;
  }

  /// Makes `best` (costing `bestCost`) the choice at p, in a joint sweep
  /// at its twins too when the plan gains more, and reopens the positions
  /// the change may concern.
  void accept(unsigned p, const StepChoice &best, double bestCost, bool joint) {
    StepChoice old = choices[p];
    choices[p] = best;
    MemoryTally before = im.prefix.memory[end];
    im.lastChanged = p;
    bool rebuilt = false;
    if (joint && !twins[p].empty()) {
      std::vector<StepChoice> all = choices;
      for (unsigned t : twins[p])
        if (all[t] == old)
          all[t] = best;
      rebuilt = im.rebuild(all, p) && im.prefix.g[end] < bestCost;
      if (rebuilt)
        choices = std::move(all);
    }
    if (!rebuilt) {
      bool ok = im.rebuild(choices, p);
      assert(ok && "an accepted change replays");
      (void)ok;
    }
    cost = im.prefix.g[end];
    bool lessMemory = false;
    for (unsigned k = 0; k < space.numReps(); ++k)
      lessMemory |= im.prefix.memory[end].peak(k) < before.peak(k);
    for (unsigned q = 0; q < end; ++q)
      if ((q <= im.lastChanged && reach[q] >= p) ||
          (lessMemory && memoryRejected[q]))
        open[q] = 1;
  }

  SearchSpace &space;
  Improver &im;
  std::vector<StepChoice> &choices;
  unsigned end;
  double cost;
  std::vector<std::vector<unsigned>> twins;
  std::vector<bool> follower;
  std::vector<uint8_t> open, memoryRejected;
  std::vector<unsigned> reach;
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
  double cost = Sweeps(space, im, choices).run();
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
