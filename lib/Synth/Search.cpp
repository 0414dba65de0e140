//===- Search.cpp - A* over the distributed instruction set ---------------===//
//
// docs/Design.md §4 at fixed ratios; docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"
#include "Dominance.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <queue>
#include <unordered_map>

using namespace weft;
using namespace weft::synth;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Packs a choice's storage indices (8 bits per operand, up to 8).
uint64_t packStorage(const StepChoice &c) {
  uint64_t x = 0;
  for (unsigned i = 0; i < c.storage.size() && i < 8; ++i)
    x |= uint64_t(c.storage[i]) << (8 * i);
  return x;
}

StepChoice unpack(uint16_t option, bool recompute, uint64_t storage,
                  unsigned operands) {
  StepChoice c;
  c.option = option;
  c.recompute = recompute;
  for (unsigned i = 0; i < operands; ++i)
    c.storage.push_back(uint8_t((storage >> (8 * i)) & 0xff));
  return c;
}

/// Doubles of memory per representative in a node (MemoryTally's fields).
constexpr unsigned kMemFields = MemoryTally::kFields;

struct Node {
  uint32_t parent;
  uint32_t pos;
  uint32_t keyOffset;
  uint32_t memOffset;
  uint16_t option;
  bool recompute = false;
  bool dead = false;
  bool closed = false;
  uint64_t storage;
  double g;
};

struct OpenEntry {
  double f, g;
  uint32_t node;
  bool operator<(const OpenEntry &o) const {
    // std::priority_queue pops the largest: invert.
    if (f != o.f)
      return f > o.f;
    if (g != o.g)
      return g < o.g;
    return node > o.node;
  }
};

/// The A* engine's arenas and tables.
class AStar {
public:
  AStar(SearchSpace &space, const SearchLimits &limits, bool pareto)
      : space(space), limits(limits), pareto(pareto), reps(space.numReps()),
        end(space.numPositions()) {}

  SearchOutcome run();
  /// States dropped for memory (0: memory never bound, so dominance on
  /// cost alone was exact).
  uint64_t memoryPruned = 0;
  /// States skipped as dominated across distributions.
  uint64_t crossDominated = 0;

private:
  double h(unsigned pos) const {
    return limits.admissible ? space.heuristic(pos) : 0;
  }
  /// The state bound (SearchSpace::heuristic(p, key)).
  double h(unsigned pos, const StateKey &key) const {
    return limits.admissible ? space.heuristic(pos, key) : 0;
  }
  StateKey keyOf(const Node &n) const {
    unsigned len = space.live(n.pos).size();
    return StateKey(keys.begin() + n.keyOffset,
                    keys.begin() + n.keyOffset + len);
  }
  std::string hashKey(unsigned pos, const StateKey &key) const {
    std::string s(reinterpret_cast<const char *>(&pos), sizeof(pos));
    s.append(reinterpret_cast<const char *>(key.data()),
             key.size() * sizeof(HeldId));
    return s;
  }
  /// Adds a node unless dominated; returns its id or ~0u.
  uint32_t add(uint32_t parent, unsigned pos, const StateKey &key,
               const double *mem, double g, const StepChoice *choice);
  /// Greedy completion from `from`: the best-f successor at every step.
  std::optional<std::pair<double, uint32_t>> greedy(uint32_t from);
  std::vector<StepChoice> path(uint32_t goal) const;
  /// The memory after `node` and step `r`, stored flat in `out`.
  void after(const Node &node, const StepResult &r, double *out) const {
    MemoryTally m = MemoryTally::load(&mems[node.memOffset], reps);
    m.add(r);
    m.store(out);
  }
  /// Committed + transient + the memory floor of the ops still to come
  /// within capacity on every representative.
  bool fits(const double *mem, unsigned pos) const {
    if (!limits.memoryPruning)
      return true;
    for (unsigned r = 0; r < reps; ++r)
      if (mem[r] + std::max(mem[reps + r], mem[2 * reps + r]) +
              space.memoryFloor(pos, r) >
          space.capacity()[r])
        return false;
    return true;
  }
  /// Estimated bytes of the tables.
  uint64_t tableBytes() const {
    return nodes.capacity() * sizeof(Node) + keys.capacity() * sizeof(HeldId) +
           mems.capacity() * sizeof(double) +
           open.size() * sizeof(OpenEntry) * 2 + seenBytes;
  }
  uint64_t seenBytes = 0;

  SearchSpace &space;
  const SearchLimits &limits;
  /// Dominance compares memory too (needed only when memory binds).
  bool pareto;
  unsigned reps, end;
  std::vector<Node> nodes;
  std::vector<HeldId> keys;
  std::vector<double> mems;
  std::unordered_map<std::string, llvm::SmallVector<uint32_t, 2>> seen;
  std::priority_queue<OpenEntry> open;
  double incumbent = std::numeric_limits<double>::infinity();
  uint32_t incumbentNode = ~0u;
  /// The best seed plan when it beats every greedy completion.
  std::optional<SearchOutcome> seed;
  /// Per position, the first closed states (the cheapest there), for
  /// dominance across distributions (cost-only dominance runs only).
  std::vector<std::vector<std::pair<Profile, double>>> closedAt;
  static constexpr size_t kClosedPerPosition = 32;
};

uint32_t AStar::add(uint32_t parent, unsigned pos, const StateKey &key,
                    const double *mem, double g, const StepChoice *choice) {
  std::string hk = hashKey(pos, key);
  auto [slot, fresh] = seen.try_emplace(std::move(hk));
  if (fresh)
    seenBytes += 96 + (slot->first.size() > 15 ? slot->first.size() + 1 : 0);
  auto &list = slot->second;
  for (uint32_t other : list) {
    const Node &o = nodes[other];
    if (o.dead || o.g > g)
      continue;
    bool noMore = true;
    for (unsigned i = 0; i < kMemFields * reps && noMore && pareto; ++i)
      noMore = mems[o.memOffset + i] <= mem[i];
    if (noMore)
      return ~0u; // Dominated.
  }
  // Drop the nodes the new one dominates.
  llvm::erase_if(list, [&](uint32_t other) {
    Node &o = nodes[other];
    if (o.dead)
      return true;
    if (o.g < g)
      return false;
    for (unsigned i = 0; i < kMemFields * reps && pareto; ++i)
      if (mems[o.memOffset + i] < mem[i])
        return false;
    o.dead = true;
    return true;
  });
  Node n;
  n.parent = parent;
  n.pos = pos;
  n.keyOffset = keys.size();
  keys.insert(keys.end(), key.begin(), key.end());
  n.memOffset = mems.size();
  mems.insert(mems.end(), mem, mem + kMemFields * reps);
  n.option = choice ? choice->option : 0;
  n.recompute = choice && choice->recompute;
  n.storage = choice ? packStorage(*choice) : 0;
  n.g = g;
  uint32_t id = nodes.size();
  nodes.push_back(n);
  list.push_back(id);
  return id;
}

std::vector<StepChoice> AStar::path(uint32_t goal) const {
  std::vector<StepChoice> out;
  for (uint32_t n = goal; nodes[n].parent != ~0u; n = nodes[n].parent) {
    const Node &node = nodes[n];
    out.push_back(unpack(node.option, node.recompute, node.storage,
                         space.ops[node.pos - 1].operands.size()));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<std::pair<double, uint32_t>> AStar::greedy(uint32_t from) {
  uint32_t cur = from;
  std::vector<double> mem(kMemFields * reps);
  while (nodes[cur].pos < end) {
    Node node = nodes[cur];
    StateKey key = keyOf(node);
    // The best-f successor that can still complete within memory (its
    // committed memory plus the floor of the ops to come fits).
    std::optional<StepResult> best;
    StepChoice bestChoice;
    double bestF = 0;
    space.forEachChoice(node.pos, [&](const StepChoice &c) {
      auto r = space.step(node.pos, key, c);
      if (!r)
        return;
      after(node, *r, mem.data());
      if (!fits(mem.data(), node.pos + 1))
        return;
      double f = r->cost + space.heuristic(node.pos + 1);
      if (!best || f < bestF) {
        best = std::move(r);
        bestChoice = c;
        bestF = f;
      }
    });
    if (!best)
      return std::nullopt;
    after(node, *best, mem.data());
    // Greedy nodes are stored but not opened (they may be dominated).
    Node n;
    n.parent = cur;
    n.pos = node.pos + 1;
    n.keyOffset = keys.size();
    keys.insert(keys.end(), best->next.begin(), best->next.end());
    n.memOffset = mems.size();
    mems.insert(mems.end(), mem.begin(), mem.end());
    n.option = bestChoice.option;
    n.recompute = bestChoice.recompute;
    n.storage = packStorage(bestChoice);
    n.g = node.g + best->cost;
    n.dead = true;
    cur = nodes.size();
    nodes.push_back(n);
  }
  return std::make_pair(nodes[cur].g, cur);
}

SearchOutcome AStar::run() {
  auto start = Clock::now();
  SearchOutcome out;
  std::vector<double> zero(kMemFields * reps, 0);
  uint32_t root = add(~0u, 0, {}, zero.data(), 0, nullptr);
  open.push({h(0), 0, root});
  if (auto inc = greedy(root)) {
    incumbent = inc->first;
    incumbentNode = inc->second;
  }
  // Seeds, improved locally (searchAStar computes them once): an incumbent
  // whenever a data-parallel plan fits.
  assert(limits.seeds && "searchAStar provides the seeds");
  if (!limits.seeds->empty() && limits.seeds->front().cost < incumbent) {
    incumbent = limits.seeds->front().cost;
    incumbentNode = ~0u;
    seed = limits.seeds->front();
  }
  // A beam over the positions (its states count as expansions): about a
  // quarter of an expansion budget, 8 to 256 states per position, skipped
  // when that budget is under 8 states per position. It runs only when the
  // A* alone looks unlikely to finish: when it would stop as hopeless, or
  // once three quarters of a limit are spent (the rest is the beam's).
  // The budget the A* plans for (the beam's share, the hopeless rule's
  // expansions left); maxExpansions may stop it before.
  uint64_t horizon = limits.horizon
                         ? std::max(limits.horizon, limits.maxExpansions)
                         : limits.maxExpansions;
  uint64_t beamBudget = horizon ? horizon / 4 : 25600;
  bool beamDone = beamBudget < 8 * uint64_t(end);
  // The expansions of the beam (left out of the A*'s own).
  uint64_t beamExpansions = 0;
  auto runBeam = [&] {
    beamDone = true;
    unsigned width =
        unsigned(std::clamp<uint64_t>(beamBudget / std::max(1u, end), 8, 256));
    uint64_t before = out.expansions;
    auto sd = beamSeed(space, width, limits.memoryPruning, &out.expansions);
    beamExpansions += out.expansions - before;
    if (sd)
      improvePlan(space, *sd, limits.memoryPruning, kDefaultImproveSteps / 4);
    if (sd && sd->cost < incumbent) {
      incumbent = sd->cost;
      incumbentNode = ~0u;
      seed = std::move(sd);
    }
  };
  double lastReport = 1;
  uint64_t checks = 0;
  // stopWhenHopeless: the bound at the last probe (the first is the root's
  // f) and where it was taken (in the A*'s own expansions).
  constexpr uint64_t kFirstProbe = 2048;
  uint64_t probeAt = kFirstProbe, probeFrom = 0;
  std::optional<double> probeF;
  std::vector<double> mem(kMemFields * reps);
  uint32_t goal = ~0u;
  while (!open.empty()) {
    OpenEntry top = open.top();
    if (nodes[top.node].dead || nodes[top.node].closed) {
      open.pop();
      continue;
    }
    if (nodes[top.node].pos == end) {
      goal = top.node;
      break;
    }
    if (!beamDone && horizon && out.expansions >= horizon - beamBudget)
      runBeam();
    bool stop = limits.maxExpansions && out.expansions >= limits.maxExpansions;
    // The bound's rise over the last doubling of the expansions, four times
    // over for the expansions left, still short of the incumbent (after the
    // beam, which may lower it): stop.
    if (!probeF)
      probeF = top.f;
    if (uint64_t done = out.expansions - beamExpansions;
        !stop && limits.stopWhenHopeless && limits.maxExpansions &&
        done >= probeAt) {
      double rate = (top.f - *probeF) / double(done - probeFrom);
      auto left = [&] {
        return double(horizon - std::min(horizon, out.expansions));
      };
      auto hopeless = [&] { return top.f + 4 * rate * left() < incumbent; };
      if (!beamDone && hopeless())
        runBeam();
      stop = out.hopeless = hopeless();
      if (stop && limits.progress)
        limits.progress(
            llvm::formatv("synthesis: search stopped after {0} expansions: "
                          "its bound rose {1:e2} s per expansion, so the "
                          "{2:f6} s to the best plan would not close in "
                          "the {3} expansions left",
                          out.expansions, rate, incumbent - top.f,
                          uint64_t(left()))
                .str());
      probeF = top.f;
      probeFrom = done;
      probeAt = 2 * done;
    }
    // Wall time and table size are checked at the first pop and every 256.
    if (!stop && (checks++ & 255) == 0) {
      double t = secondsSince(start);
      uint64_t bytes = tableBytes();
      if (!beamDone &&
          ((limits.timeLimitSeconds > 0 &&
            t >= 0.75 * limits.timeLimitSeconds) ||
           (limits.maxStateBytes && bytes >= limits.maxStateBytes / 4 * 3))) {
        runBeam();
        t = secondsSince(start);
      }
      stop = limits.timeLimitSeconds > 0 && t >= limits.timeLimitSeconds;
      out.stateBytes = std::max(out.stateBytes, bytes);
      stop |= limits.maxStateBytes && bytes >= limits.maxStateBytes;
      if (limits.progress && t >= lastReport) {
        lastReport = t + 1;
        limits.progress(llvm::formatv("synthesis: {0} expansions ({1}/s), "
                                      "best {2:f6} s, bound {3:f6} s",
                                      out.expansions,
                                      uint64_t(out.expansions / t), incumbent,
                                      top.f)
                            .str());
      }
    }
    if (stop) {
      out.capped = true;
      out.lowerBound = top.f;
      // Greedy completion of the best open state may beat the incumbent.
      if (auto inc = greedy(top.node); inc && inc->first < incumbent) {
        incumbent = inc->first;
        incumbentNode = inc->second;
      }
      break;
    }
    open.pop();
    Node node = nodes[top.node];
    nodes[top.node].closed = true;
    StateKey key = keyOf(node);
    // Dominance across distributions by a state closed at this position
    // (its g is no larger: same h, popped earlier).
    if (!pareto) {
      if (closedAt.empty())
        closedAt.resize(end + 1);
      auto &list = closedAt[node.pos];
      Profile profile = profileOf(space, node.pos, key);
      bool dominated = false;
      for (auto &[p, g] : list)
        if ((dominated = dominates(p, g, profile, node.g)))
          break;
      if (dominated) {
        ++crossDominated;
        continue;
      }
      if (list.size() < kClosedPerPosition)
        list.emplace_back(std::move(profile), node.g);
    }
    ++out.expansions;
    space.forEachChoice(node.pos, [&](const StepChoice &c) {
      auto r = space.step(node.pos, key, c);
      if (!r)
        return;
      double g = node.g + r->cost;
      double hNext = h(node.pos + 1, r->next);
      if (g + hNext > incumbent * (1 + 1e-12))
        return;
      after(node, *r, mem.data());
      if (!fits(mem.data(), node.pos + 1)) {
        ++memoryPruned;
        return;
      }
      uint32_t id = add(top.node, node.pos + 1, r->next, mem.data(), g, &c);
      // Pathmax: a child's completion is one of its parent's (h need not
      // be consistent).
      if (id != ~0u)
        open.push({std::max(top.f, g + hNext), g, id});
    });
  }
  uint32_t best = ~0u;
  bool fromSeed = false;
  if (goal != ~0u && nodes[goal].g <= incumbent * (1 + 1e-12))
    best = goal;
  else
    best = incumbentNode;
  if (best != ~0u) {
    out.found = true;
    out.cost = nodes[best].g;
    out.choices = path(best);
    for (unsigned r = 0; r < reps; ++r)
      out.peakMemory.push_back(
          MemoryTally::load(&mems[nodes[best].memOffset], reps).peak(r));
  } else if (seed) {
    out.found = true;
    out.cost = seed->cost;
    out.choices = seed->choices;
    out.peakMemory = seed->peakMemory;
    fromSeed = true;
  }
  // A stopped search's plan is improved locally (never worse; its cost is
  // replayed, so the gap below stays a proven bound), unless it is a seed:
  // seeds come improved (improvedSeedPlans; the beam's above), and another
  // improvement would mostly repeat the sweeps spent on them.
  if (out.capped && out.found && !fromSeed)
    improvePlan(space, out, limits.memoryPruning, kDefaultImproveSteps);
  out.stateBytes = std::max(out.stateBytes, tableBytes());
  if (!out.capped)
    out.lowerBound = out.cost;
  else
    out.lowerBound = std::max(out.lowerBound, h(0));
  out.gap = out.found && out.cost > 0
                ? std::max(0.0, (out.cost - out.lowerBound) / out.cost)
                : 0;
  if (!out.found)
    out.gap = 0;
  out.wallSeconds = secondsSince(start);
  return out;
}
} // namespace

SearchOutcome weft::synth::searchAStar(SearchSpace &space,
                                       const SearchLimits &limits) {
  // Dominance on cost alone is exact when memory never binds; otherwise
  // search again with memory in the dominance test (docs/Design.md §4), with
  // what is left of the limits.
  if (!limits.seeds) {
    SearchLimits shared = limits;
    shared.seeds = std::make_shared<const std::vector<SearchOutcome>>(
        improvedSeedPlans(space, limits.memoryPruning));
    return searchAStar(space, shared);
  }
  SearchOutcome out;
  uint64_t firstBytes = 0;
  {
    AStar first(space, limits, /*pareto=*/false);
    out = first.run();
    firstBytes = out.stateBytes;
    // A hopeless first run: the second, whose dominance prunes less,
    // would be no nearer.
    if (!first.memoryPruned || out.hopeless)
      return out;
  }
  SearchLimits rest = limits;
  if (limits.maxExpansions) {
    if (out.expansions >= limits.maxExpansions)
      return out;
    rest.maxExpansions = limits.maxExpansions - out.expansions;
  }
  if (limits.timeLimitSeconds > 0) {
    if (out.wallSeconds >= limits.timeLimitSeconds)
      return out;
    rest.timeLimitSeconds = limits.timeLimitSeconds - out.wallSeconds;
  }
  SearchOutcome exact;
  {
    AStar second(space, rest, /*pareto=*/true);
    exact = second.run();
  }
  exact.expansions += out.expansions;
  exact.wallSeconds += out.wallSeconds;
  exact.stateBytes = std::max(exact.stateBytes, firstBytes);
  // A capped exact run keeps the better of the two plans (both fit memory);
  // its gap is measured against its own open list.
  if (exact.capped && out.found && (!exact.found || out.cost < exact.cost)) {
    double lb = exact.lowerBound;
    exact.found = true;
    exact.cost = out.cost;
    exact.choices = std::move(out.choices);
    exact.peakMemory = std::move(out.peakMemory);
    exact.gap =
        exact.cost > 0 ? std::max(0.0, (exact.cost - lb) / exact.cost) : 0;
  }
  return exact;
}

std::optional<SearchOutcome> weft::synth::beamSeed(SearchSpace &space,
                                                   unsigned width,
                                                   bool memoryPruning,
                                                   uint64_t *expansions) {
  unsigned reps = space.numReps(), end = space.numPositions();
  struct Entry {
    StateKey key;
    double g;
    uint32_t parent;
    StepChoice choice;
    MemoryTally memory;
  };
  std::vector<std::vector<Entry>> layers(end + 1);
  layers[0].push_back({{}, 0, ~0u, {}, MemoryTally(reps)});
  for (unsigned p = 0; p < end; ++p) {
    auto &cur = layers[p];
    auto &next = layers[p + 1];
    std::unordered_map<std::string, uint32_t> index;
    for (uint32_t i = 0; i < cur.size(); ++i) {
      if (expansions)
        ++*expansions;
      space.forEachChoice(p, [&](const StepChoice &c) {
        const Entry &from = cur[i];
        auto r = space.step(p, from.key, c);
        if (!r)
          return;
        Entry e{std::move(r->next), from.g + r->cost, i, c,
                from.memory.after(*r)};
        if (memoryPruning && !space.mayFit(e.memory, p + 1))
          return;
        std::string bytes(reinterpret_cast<const char *>(e.key.data()),
                          e.key.size() * sizeof(HeldId));
        auto [it, inserted] = index.try_emplace(std::move(bytes), 0);
        if (inserted) {
          it->second = next.size();
          next.push_back(std::move(e));
        } else if (e.g < next[it->second].g) {
          next[it->second] = std::move(e);
        }
      });
    }
    if (next.empty())
      return std::nullopt;
    // Keep the `width` cheapest (one position: ranking by g is by f).
    if (next.size() > width) {
      std::vector<uint32_t> order(next.size());
      for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return next[a].g < next[b].g;
      });
      order.resize(width);
      std::sort(order.begin(), order.end());
      std::vector<Entry> kept;
      for (uint32_t i : order)
        kept.push_back(std::move(next[i]));
      next = std::move(kept);
    }
  }
  auto &last = layers.back();
  uint32_t best = 0;
  for (uint32_t i = 1; i < last.size(); ++i)
    if (last[i].g < last[best].g)
      best = i;
  SearchOutcome out;
  out.found = true;
  out.cost = last[best].g;
  for (unsigned k = 0; k < reps; ++k)
    out.peakMemory.push_back(last[best].memory.peak(k));
  out.choices.resize(end);
  uint32_t at = best;
  for (unsigned p = end; p > 0; --p) {
    out.choices[p - 1] = layers[p][at].choice;
    at = layers[p][at].parent;
  }
  return out;
}

namespace {
/// Replicated, Zero1, Zero2: data parallel, parameters stored that way
/// where offered (with gradient accumulation a whole-gradient or
/// reduce-scatter sync is cheaper than ZeRO-3's gathers every micro-batch).
enum class SeedMode {
  Replicated,
  Zero1,
  Zero2,
  MinStorage,
  LeastMemory,
  TensorParallel
};
/// `checkpointed` (spaces with recomputation): every op with a backward
/// pass is recomputed except the last before each cut, so a run spans one
/// block and only block inputs are kept (per-layer checkpointing).
std::optional<SearchOutcome> seedOf(SearchSpace &space, SeedMode mode,
                                    bool memoryPruning,
                                    bool checkpointed = false);
} // namespace

std::optional<SearchOutcome> weft::synth::dataParallelSeed(SearchSpace &space,
                                                           bool minMemory,
                                                           bool memoryPruning) {
  return seedOf(space, minMemory ? SeedMode::MinStorage : SeedMode::Replicated,
                memoryPruning);
}

std::optional<SearchOutcome> weft::synth::leastMemorySeed(SearchSpace &space,
                                                          bool memoryPruning) {
  return seedOf(space, SeedMode::LeastMemory, memoryPruning);
}

std::optional<SearchOutcome>
weft::synth::tensorParallelSeed(SearchSpace &space, bool memoryPruning) {
  if (llvm::all_of(llvm::drop_begin(space.axisSizes),
                   [](int64_t s) { return s <= 1; }))
    return std::nullopt;
  return seedOf(space, SeedMode::TensorParallel, memoryPruning);
}

std::vector<SearchOutcome> weft::synth::seedPlans(SearchSpace &space,
                                                  bool memoryPruning) {
  std::vector<SearchOutcome> out;
  for (auto seed : {dataParallelSeed(space, false, memoryPruning),
                    dataParallelSeed(space, true, memoryPruning),
                    leastMemorySeed(space, memoryPruning),
                    tensorParallelSeed(space, memoryPruning)})
    if (seed)
      out.push_back(std::move(*seed));
  if (space.recomputes())
    for (SeedMode mode : {SeedMode::Replicated, SeedMode::Zero1,
                          SeedMode::Zero2, SeedMode::MinStorage,
                          SeedMode::LeastMemory, SeedMode::TensorParallel})
      if (auto seed = seedOf(space, mode, memoryPruning, true))
        out.push_back(std::move(*seed));
  return out;
}

namespace {
std::optional<SearchOutcome> seedOf(SearchSpace &space, SeedMode mode,
                                    bool memoryPruning, bool checkpointed) {
  unsigned reps = space.numReps(), end = space.numPositions();
  StateKey key;
  SearchOutcome out;
  MemoryTally memory(reps);
  // The uniform modes' storage: the strategy wanted for every parameter.
  std::optional<spmd::ParamStrategy> wanted;
  if (mode == SeedMode::Replicated)
    wanted = spmd::ParamStrategy::Replicated;
  else if (mode == SeedMode::Zero1)
    wanted = spmd::ParamStrategy::Zero1;
  else if (mode == SeedMode::Zero2)
    wanted = spmd::ParamStrategy::Zero2;
  std::vector<bool> lastOfBlock(end + 1, false);
  if (checkpointed && space.recomputes())
    for (unsigned c : space.checkpointCuts())
      if (c > 0)
        lastOfBlock[c - 1] = true;
  for (unsigned p = 0; p < end; ++p) {
    const OpInfo &op = space.ops[p];
    std::optional<StepResult> best;
    StepChoice bestChoice;
    std::tuple<int, int, double, double> bestKey;
    bool recomputeHere =
        checkpointed && space.recomputes() && op.grad && !lastOfBlock[p];
    space.forEachChoice(p, [&](const StepChoice &c) {
      if (checkpointed && c.recompute != recomputeHere)
        return;
      const OpOption &option = op.options[c.option];
      int batchSplits = 0, paramSplits = 0, nodeBatch = 0, localParams = 0;
      double storage = 0;
      for (auto [i, v] : llvm::enumerate(op.operands)) {
        if (option.operands[i] == kNoDist)
          continue;
        const ValueInfo &info = space.values[v];
        spmd::DistAttr d = space.dist(option.operands[i]);
        for (auto [a, e] : llvm::enumerate(d.getAxes())) {
          if (space.axisSizes[a] <= 1)
            continue;
          bool activation = info.kind == ValueInfo::Kind::Op ||
                            info.kind == ValueInfo::Kind::Input;
          if (activation && e.isGather() && e.dim == 0) {
            ++batchSplits;
            nodeBatch += a == 0;
          }
          if (info.kind == ValueInfo::Kind::Parameter && !e.isIdentity()) {
            ++paramSplits;
            localParams += a > 0;
          }
        }
        if (info.defPos < 0 && info.uses.front() == p) {
          auto opts = space.storageOptions(v, option.operands[i]);
          if (c.storage[i] < opts.size()) {
            const StorageOption &so = opts[c.storage[i]];
            if (!wanted)
              storage +=
                  *std::max_element(so.committed.begin(), so.committed.end());
            else
              storage += so.strategy == *wanted ||
                                 so.strategy == spmd::ParamStrategy::Buffer
                             ? 0
                             : 1;
          }
        }
      }
      // The key's leading parts are known before the step (except in
      // LeastMemory mode): a choice they rank below the best cannot win,
      // since the step's cost only breaks ties.
      std::tuple<int, int, double> lead{-batchSplits, paramSplits, storage};
      if (mode == SeedMode::TensorParallel)
        lead = {-nodeBatch, -localParams, 0};
      if (best && mode != SeedMode::LeastMemory &&
          std::make_tuple(std::get<0>(bestKey), std::get<1>(bestKey),
                          std::get<2>(bestKey)) < lead)
        return;
      auto r = space.step(p, key, c);
      if (!r)
        return;
      MemoryTally next = memory.after(*r);
      if (memoryPruning && !space.mayFit(next, p + 1))
        return;
      std::tuple<int, int, double, double> k{-batchSplits, paramSplits, storage,
                                             r->cost};
      // Data parallel across nodes, parameters split inside them (as
      // TP-DP), the rest as cheap as the held distributions allow.
      if (mode == SeedMode::TensorParallel)
        k = {-nodeBatch, -localParams, 0, r->cost};
      if (mode == SeedMode::LeastMemory) {
        // The fullest device after the step, as a share of its capacity.
        double fullest = 0;
        for (unsigned i = 0; i < reps; ++i)
          fullest = std::max(fullest, next.peak(i) / space.capacity()[i]);
        k = {0, 0, fullest, r->cost};
      }
      if (!best || k < bestKey) {
        best = std::move(r);
        bestChoice = c;
        bestKey = k;
      }
    });
    if (!best)
      return std::nullopt;
    out.cost += best->cost;
    memory.add(*best);
    key = std::move(best->next);
    out.choices.push_back(bestChoice);
  }
  out.found = true;
  for (unsigned i = 0; i < reps; ++i)
    out.peakMemory.push_back(memory.peak(i));
  return out;
}

} // namespace

std::optional<double> weft::synth::replay(SearchSpace &space,
                                          llvm::ArrayRef<StepChoice> choices,
                                          std::vector<StepDetail> *details,
                                          RepVector *peakMemory) {
  if (choices.size() != space.numPositions())
    return std::nullopt;
  StateKey key;
  double total = 0;
  unsigned reps = space.numReps();
  MemoryTally memory(reps);
  for (unsigned p = 0; p < choices.size(); ++p) {
    StepDetail detail;
    auto r = space.step(p, key, choices[p], details ? &detail : nullptr);
    if (!r)
      return std::nullopt;
    total += r->cost;
    memory.add(*r);
    key = std::move(r->next);
    if (details)
      details->push_back(std::move(detail));
  }
  if (peakMemory) {
    peakMemory->clear();
    for (unsigned i = 0; i < reps; ++i)
      peakMemory->push_back(memory.peak(i));
  }
  return total;
}
