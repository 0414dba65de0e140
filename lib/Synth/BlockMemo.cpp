//===- BlockMemo.cpp - Repeated blocks memoised, outer DP -----------------===//
//
// docs/Design.md §4 "Memoisation of repeated blocks"; docs/Synthesis.md.
//
// The order is cut at positions whose live set is small (the residual
// stream plus loop-invariant values). Each interval between two cuts is a
// block; blocks are keyed by an exact structural signature (per op its
// option table — distributions, compute, kept and produced bytes — and
// where every operand comes from: the block, the entry live set, or a leaf
// first used here with its type; the live sets at every position in block-
// relative terms). Names never enter the signature. A block is solved from
// one entry state by a layered dynamic program (every step advances one
// position, so the least cost to every state of a layer is final once the
// previous layer is done): the least cost to every exit state. The memo
// maps (block signature, entry state) to those exits; the held-set ids of a
// state are global, so the same entry in two blocks of one signature is the
// same key. An outer dynamic program over the cuts joins the blocks: exact
// because cost is additive.
//
// Memory: blocks are solved ignoring memory. When the plan found fits (its
// replayed peak within capacity on every representative) it is optimal
// with memory too; otherwise the plain A* (memory in the state) runs
// instead. Limits: every state expanded counts as an expansion; when the
// memoised search would exceed a limit it stops and the plain A* runs with
// what is left (the plain A* always has an incumbent when a data-parallel
// plan fits).
//
//===----------------------------------------------------------------------===//

#include "BlockClasses.h"
#include "Dominance.h"
#include "weft/Synth/Search.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

using namespace weft;
using namespace weft::synth;

/// `-debug-only=weft-block-memo` (a tool of an LLVM with assertions) prints
/// the blocks solved and the states kept per layer.
#define DEBUG_TYPE "weft-block-memo"

namespace {
using Clock = std::chrono::steady_clock;

std::string keyBytes(const StateKey &key) {
  return std::string(reinterpret_cast<const char *>(key.data()),
                     key.size() * sizeof(HeldId));
}

/// One exit of a block solved from one entry.
struct Exit {
  StateKey key;
  double cost = 0;
  std::vector<StepChoice> choices;
};

/// Survivors are compared with at most this many cheaper survivors.
constexpr size_t kCompare = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Which of `n` states at position p survive: not dominated by a cheaper
/// (or equal, earlier) one. `keyOf(i)`, `gOf(i)`. Compares each state with
/// at most the kCompare cheapest survivors (fewer comparisons only prune less).
template <typename KeyOf, typename GOf>
std::vector<bool> survivors(SearchSpace &space, unsigned p, size_t n,
                            KeyOf keyOf, GOf gOf) {
  std::vector<bool> keep(n, true);
  if (n < 2)
    return keep;
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return gOf(a) < gOf(b); });
  // At most about 2^22 comparisons per call (fewer only prune less).
  size_t limit = std::min<size_t>(kCompare, (size_t(1) << 22) / n + 1);
  std::vector<Profile> profiles(n);
  std::vector<uint32_t> kept;
  for (uint32_t i : order) {
    profiles[i] = profileOf(space, p, keyOf(i));
    for (size_t k = 0; k < kept.size() && k < limit; ++k)
      if (dominates(profiles[kept[k]], gOf(kept[k]), profiles[i], gOf(i))) {
        keep[i] = false;
        break;
      }
    if (keep[i])
      kept.push_back(i);
  }
  return keep;
}

/// Keeps the survivors of `v` in order.
template <typename T>
void compact(std::vector<T> &v, const std::vector<bool> &keep) {
  size_t o = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (keep[i]) {
      if (o != i)
        v[o] = std::move(v[i]);
      ++o;
    }
  v.resize(o);
}

class MemoSearch {
public:
  MemoSearch(SearchSpace &space, const SearchLimits &limits)
      : space(space), limits(limits), reps(space.numReps()),
        start(Clock::now()) {}

  /// The optimum ignoring memory, or none when a limit stopped it.
  std::optional<SearchOutcome> run();
  uint64_t expansions = 0;
  unsigned blocks = 0, classes = 0, solves = 0;

private:
  /// Solves block [a, b) from `entry`; none when a limit stopped it.
  /// Every exit costing at most `budget` (and maybe more) is returned:
  /// states whose g plus the block bound exceeds it are pruned.
  /// A solve stops (none) after `cap` expansions too (0: no cap).
  std::optional<std::vector<Exit>> solve(unsigned a, unsigned b,
                                         const StateKey &entry, double budget,
                                         uint64_t cap);
  /// With stopWhenHopeless, the expansions one solve at a cut may take:
  /// twice its share of what is left, shared by the `unsolved` entries the
  /// cut still has to solve (0: no cap).
  uint64_t solveCap(size_t unsolved) const {
    if (!limits.stopWhenHopeless || !limits.maxExpansions || unsolved == 0)
      return 0;
    uint64_t left =
        limits.maxExpansions - std::min(limits.maxExpansions, expansions);
    return std::max<uint64_t>(1, 2 * left / unsolved);
  }
  bool overLimits() {
    if (limits.maxExpansions && expansions >= limits.maxExpansions)
      return true;
    if (limits.timeLimitSeconds > 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() >=
            limits.timeLimitSeconds)
      return true;
    return limits.maxStateBytes && bytes >= limits.maxStateBytes;
  }

  SearchSpace &space;
  const SearchLimits &limits;
  unsigned reps;
  Clock::time_point start;
  uint64_t bytes = 0;
  double incumbent = 0;
  BlockClasses blockClasses{space};
  /// A solved (class, entry): every exit costing at most `budget`.
  struct Solved {
    double budget;
    const std::vector<Exit> *exits;
  };
  std::map<std::pair<unsigned, std::string>, Solved> memo;
  /// Every exit list solved (stable: the outer DP points into them).
  std::deque<std::vector<Exit>> solved;

  /// Outer DP: per cut, the least cost to every state, with back-pointers.
  struct Outer {
    StateKey key;
    double g;
    uint32_t parent;
    /// The memo entry and exit that led here.
    const std::vector<Exit> *exits;
    uint32_t exit;
  };
  std::vector<unsigned> cut;
  std::vector<std::vector<Outer>> frontier;
  /// An upper bound on the memory-blind optimum: the cheapest seed (any
  /// plan is one), else a memory-blind data-parallel seed.
  void setIncumbent();
  /// Joins block k (cuts k to k + 1) to the outer DP; false when a limit
  /// stopped its solve.
  bool joinBlock(unsigned k, unsigned cls);
  /// The exits of block k's class from entry i of its cut, solved unless
  /// the memo holds them for a budget at least as large; null when a limit
  /// stopped the solve. `unsolved`: the entries from i on no block of the
  /// class has solved.
  const std::vector<Exit> *exitsFrom(unsigned k, unsigned cls, uint32_t i,
                                     size_t unsolved);
  /// Drops the states at cut k + 1 that cannot beat the incumbent (by the
  /// state bound), then dominated ones.
  void prune(unsigned k);
  /// The cheapest plan at the last cut (found false when none is left and
  /// no incumbent bounded them); none when rounding left none below the
  /// incumbent.
  std::optional<SearchOutcome> planAtEnd();
};

std::optional<std::vector<Exit>> MemoSearch::solve(unsigned a, unsigned b,
                                                   const StateKey &entry,
                                                   double budget,
                                                   uint64_t cap) {
  uint64_t first = expansions;
  struct Entry {
    StateKey key;
    double g;
    uint32_t parent;
    StepChoice choice;
  };
  bool bounded = !std::isinf(budget);
  double limit = budget * (1 + 1e-9);
  std::vector<std::vector<Entry>> layers(b - a + 1);
  layers[0].push_back({entry, 0, ~0u, {}});
  size_t pruned = 0;
  for (unsigned q = a; q < b; ++q) {
    auto &cur = layers[q - a];
    auto &next = layers[q - a + 1];
    std::unordered_map<std::string, uint32_t> index;
    for (uint32_t i = 0; i < cur.size(); ++i) {
      if ((++expansions & 63) == 0 && overLimits())
        return std::nullopt;
      if (cap && expansions - first > cap)
        return std::nullopt;
      // (Copied: `next` may be `cur`'s neighbour but never `cur` itself.)
      space.forEachChoice(q, [&](const StepChoice &c) {
        const Entry &from = cur[i];
        auto r = space.step(q, from.key, c);
        if (!r)
          return;
        double g = from.g + r->cost;
        if (g > limit) {
          ++pruned;
          return;
        }
        auto [it, inserted] = index.try_emplace(keyBytes(r->next), 0);
        if (!inserted && next[it->second].g <= g)
          return;
        Entry e{std::move(r->next), g, i, c};
        if (inserted) {
          it->second = next.size();
          bytes += sizeof(Entry) + e.key.size() * sizeof(HeldId) + 96;
          next.push_back(std::move(e));
        } else {
          next[it->second] = std::move(e);
        }
      });
    }
    size_t before = next.size();
    if (bounded) {
      // g + the block bound over the budget: no exit within it.
      std::vector<bool> keep(next.size());
      for (size_t i = 0; i < next.size(); ++i)
        keep[i] = next[i].g + space.blockBound(q + 1, b, next[i].key) <= limit;
      pruned += llvm::count(keep, false);
      compact(next, keep);
    }
    compact(next,
            survivors(
                space, q + 1, next.size(),
                [&](uint32_t i) -> const StateKey & { return next[i].key; },
                [&](uint32_t i) { return next[i].g; }));
    LLVM_DEBUG(llvm::dbgs() << llvm::formatv(
                   "  layer {0}: {1} -> {2} states, live {3}\n", q + 1, before,
                   next.size(), space.live(q + 1).size()));
  }
  if (bounded)
    LLVM_DEBUG(llvm::dbgs() << llvm::formatv(
                   "  budget {0} s: {1} states pruned\n", budget, pruned));
  std::vector<Exit> out;
  auto &last = layers.back();
  for (uint32_t i = 0; i < last.size(); ++i) {
    Exit x;
    x.key = last[i].key;
    x.cost = last[i].g;
    x.choices.resize(b - a);
    uint32_t at = i;
    for (unsigned q = b; q > a; --q) {
      const Entry &e = layers[q - a][at];
      x.choices[q - a - 1] = e.choice;
      at = e.parent;
    }
    bytes += x.choices.size() * sizeof(StepChoice) + sizeof(Exit);
    out.push_back(std::move(x));
  }
  return out;
}

std::optional<SearchOutcome> MemoSearch::run() {
  cut = space.cuts();
  blocks = cut.size() - 1;
  frontier.assign(cut.size(), {});
  frontier[0].push_back({{}, 0, ~0u, nullptr, 0});
  std::set<unsigned> seenClasses;
  setIncumbent();
  for (unsigned k = 0; k + 1 < cut.size(); ++k) {
    unsigned cls = blockClasses.classOf(cut[k], cut[k + 1]);
    seenClasses.insert(cls);
    if (!joinBlock(k, cls))
      return std::nullopt;
    prune(k);
    if (limits.progress &&
        std::chrono::duration<double>(Clock::now() - start).count() > 1)
      limits.progress(llvm::formatv("synthesis (memo): block {0}/{1}, {2} "
                                    "states, {3} expansions",
                                    k + 1, cut.size() - 1,
                                    frontier[k + 1].size(), expansions)
                          .str());
  }
  classes = seenClasses.size();
  return planAtEnd();
}

void MemoSearch::setIncumbent() {
  incumbent = std::numeric_limits<double>::infinity();
  if (!limits.seeds->empty())
    incumbent = limits.seeds->front().cost;
  else
    for (bool minMemory : {false, true})
      if (auto sd = dataParallelSeed(space, minMemory, /*memoryPruning=*/false))
        incumbent = std::min(incumbent, sd->cost);
}

bool MemoSearch::joinBlock(unsigned k, unsigned cls) {
  std::unordered_map<std::string, uint32_t> index;
  auto &next = frontier[k + 1];
  // Per entry, how many entries after it no block of the class has
  // solved (their keys differ, so solving one solves no other).
  std::vector<size_t> unsolvedFrom(frontier[k].size() + 1, 0);
  if (limits.stopWhenHopeless)
    for (size_t j = frontier[k].size(); j-- > 0;)
      unsolvedFrom[j] = unsolvedFrom[j + 1] +
                        !memo.count({cls, keyBytes(frontier[k][j].key)});
  for (uint32_t i = 0; i < frontier[k].size(); ++i) {
    const std::vector<Exit> *found =
        exitsFrom(k, cls, i, 1 + unsolvedFrom[i + 1]);
    if (!found)
      return false;
    const std::vector<Exit> &exits = *found;
    for (uint32_t x = 0; x < exits.size(); ++x) {
      double g = frontier[k][i].g + exits[x].cost;
      auto [slot, inserted] = index.try_emplace(keyBytes(exits[x].key), 0);
      if (!inserted && next[slot->second].g <= g)
        continue;
      Outer o{exits[x].key, g, i, &exits, x};
      if (inserted) {
        slot->second = next.size();
        next.push_back(std::move(o));
      } else {
        next[slot->second] = std::move(o);
      }
    }
  }
  return true;
}

const std::vector<Exit> *MemoSearch::exitsFrom(unsigned k, unsigned cls,
                                               uint32_t i, size_t unsolved) {
  unsigned a = cut[k], b = cut[k + 1];
  const Outer &from = frontier[k][i];
  auto memoKey = std::make_pair(cls, keyBytes(from.key));
  // Exits worth having: with the bound of the rest of the program
  // (not of the state: the memo serves every block of the class), a
  // dearer exit cannot beat the incumbent.
  double budget = kInf;
  if (limits.admissible && !std::isinf(incumbent))
    budget = incumbent * (1 + 1e-9) - from.g - space.heuristic(b);
  auto it = memo.find(memoKey);
  if (it != memo.end() && it->second.budget >= budget)
    return it->second.exits;
  uint64_t before = expansions;
  // A solve that takes more than twice its share of the expansions left
  // shows the memo will not finish (a heuristic, as the plain A*'s
  // hopeless stop; only with stopWhenHopeless).
  uint64_t cap = solveCap(unsolved);
  auto exits = solve(a, b, from.key, budget, cap);
  LLVM_DEBUG(llvm::dbgs() << llvm::formatv(
                 "block {0} [{1},{2}) live {3} class {4} entry {5}: {6} "
                 "expansions, {7} exits{8}\n",
                 k, a, b, space.live(a).size(), cls, i, expansions - before,
                 exits ? exits->size() : 0,
                 it == memo.end() ? "" : " (solved again, larger budget)"));
  if (!exits) {
    if (cap && expansions - before > cap && limits.progress)
      limits.progress(
          llvm::formatv("synthesis: block memo stopped at block "
                        "{0}/{1}: one of its {2} entries to solve "
                        "took over {3} expansions, {4} left",
                        k + 1, cut.size() - 1, unsolved, cap,
                        limits.maxExpansions -
                            std::min(limits.maxExpansions, expansions))
              .str());
    return nullptr;
  }
  ++solves;
  solved.push_back(std::move(*exits));
  if (it == memo.end())
    it = memo.emplace(std::move(memoKey), Solved{}).first;
  it->second = Solved{budget, &solved.back()};
  return it->second.exits;
}

void MemoSearch::prune(unsigned k) {
  unsigned b = cut[k + 1];
  auto &next = frontier[k + 1];
  std::vector<bool> keep(next.size(), true);
  for (size_t i = 0; i < next.size(); ++i) {
    double h = limits.admissible ? space.heuristic(b, next[i].key) : 0;
    keep[i] = next[i].g + h <= incumbent * (1 + 1e-12);
  }
  compact(next, keep);
  compact(next, survivors(
                    space, b, next.size(),
                    [&](uint32_t i) -> const StateKey & { return next[i].key; },
                    [&](uint32_t i) { return next[i].g; }));
}

std::optional<SearchOutcome> MemoSearch::planAtEnd() {
  auto &goals = frontier.back();
  if (goals.empty()) {
    // Nothing within the incumbent (rounding): let the plain A* decide.
    if (!std::isinf(incumbent))
      return std::nullopt;
    SearchOutcome none;
    return none;
  }
  uint32_t best = 0;
  for (uint32_t i = 1; i < goals.size(); ++i)
    if (goals[i].g < goals[best].g)
      best = i;
  SearchOutcome out;
  out.found = true;
  out.cost = goals[best].g;
  out.lowerBound = out.cost;
  std::vector<const Outer *> chain;
  uint32_t at = best;
  for (unsigned k = cut.size() - 1; k > 0; --k) {
    chain.push_back(&frontier[k][at]);
    at = frontier[k][at].parent;
  }
  std::reverse(chain.begin(), chain.end());
  for (const Outer *o : chain) {
    const Exit &x = (*o->exits)[o->exit];
    out.choices.insert(out.choices.end(), x.choices.begin(), x.choices.end());
  }
  // Peak memory by replaying the plan (runs of recomputed ops may cross
  // the cuts).
  replay(space, out.choices, nullptr, &out.peakMemory);
  return out;
}
} // namespace

SearchOutcome weft::synth::search(SearchSpace &space,
                                  const SearchLimits &limits) {
  if (!limits.memo)
    return searchAStar(space, limits);
  if (!limits.seeds) {
    // Improved once, shared by the memo and the plain A*.
    SearchLimits shared = limits;
    shared.seeds = std::make_shared<const std::vector<SearchOutcome>>(
        improvedSeedPlans(space, limits.memoryPruning));
    return search(space, shared);
  }
  auto start = Clock::now();
  // With plainFirst (the default budget) the plain A* tries first on
  // the memo's share of the expansions: when its bound is tight it closes
  // there, cheaper than solving blocks. When it stops as hopeless, a rerun
  // with more expansions would stop the same way, so its outcome stands
  // unless the memo finishes; when its share ran out, the memo and then
  // the plain A* with what is left run as below.
  std::optional<SearchOutcome> first;
  if (limits.plainFirst && limits.stopWhenHopeless && limits.maxExpansions) {
    SearchLimits share = limits;
    share.maxExpansions = (limits.maxExpansions + 7) / 8;
    share.horizon = limits.maxExpansions;
    share.timeLimitSeconds = limits.timeLimitSeconds / 8;
    first = searchAStar(space, share);
    if (!first->capped)
      return *first;
  }
  uint64_t firstExpansions = first ? first->expansions : 0;
  // The memoised search gets half of each limit (an eighth of the
  // expansions with stopWhenHopeless, the default budget: a memo that does
  // not finish early rarely finishes at all); the rest is the plain A*'s
  // when it has to run.
  SearchLimits half = limits;
  half.maxExpansions = limits.stopWhenHopeless ? (limits.maxExpansions + 7) / 8
                                               : (limits.maxExpansions + 1) / 2;
  half.timeLimitSeconds = limits.timeLimitSeconds / 2;
  half.maxStateBytes = limits.maxStateBytes / 2;
  auto memo = std::make_unique<MemoSearch>(space, half);
  std::optional<SearchOutcome> found = memo->run();
  uint64_t memoUsed = memo->expansions, used = memoUsed + firstExpansions;
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (found) {
    found->expansions = used;
    found->memoExpansions = memoUsed;
    found->wallSeconds = wall;
    bool fits = true;
    if (found->found && limits.memoryPruning)
      for (unsigned r = 0; r < space.numReps(); ++r)
        fits &= found->peakMemory[r] <= space.capacity()[r];
    // No plan even ignoring memory: none exists.
    if (!found->found || fits) {
      found->memoised = true;
      return *found;
    }
  }
  // Memory binds or a limit stopped the memoised search: the plain A* with
  // what is left of the limits (the memo's tables are freed first), unless
  // its first try stopped as hopeless.
  memo.reset();
  if (first && first->hopeless) {
    first->expansions = used;
    first->memoExpansions = memoUsed;
    first->wallSeconds = wall;
    return *first;
  }
  SearchLimits rest = limits;
  if (limits.maxExpansions)
    rest.maxExpansions = std::max<uint64_t>(
        1, limits.maxExpansions - std::min(limits.maxExpansions, used));
  if (limits.timeLimitSeconds > 0)
    rest.timeLimitSeconds = std::max(0.01, limits.timeLimitSeconds - wall);
  SearchOutcome out = searchAStar(space, rest);
  out.expansions += used;
  out.memoExpansions = memoUsed;
  out.wallSeconds += wall;
  return out;
}
