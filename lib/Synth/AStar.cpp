//===- AStar.cpp - A* over the distributed instruction set ----------------===//
//
// docs/Design.md §4 at fixed ratios; docs/Synthesis.md. The plain A* over
// the whole program: g = Σ step costs, h = the space's state bound,
// memory-capacity pruning, dominance on (position, held distributions) with
// no more cost (and no more memory once memory binds), dominance across
// distributions, greedy and seed incumbents, deterministic ties. When it
// stops is SearchBudget's to say (lib/Synth/SearchBudget.h).
//
//===----------------------------------------------------------------------===//

#include "Dominance.h"
#include "SearchBudget.h"
#include "weft/Synth/Search.h"
#include <queue>
#include <unordered_map>

using namespace weft;
using namespace weft::synth;

namespace {
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
  /// The greedy completion of the root and the best seed as incumbents.
  void takeIncumbents(uint32_t root);
  /// Asks the budget whether to expand `top` (running the beam when it
  /// says so); on a stop, marks `out` capped with `top`'s bound and tries
  /// a greedy completion of `top`.
  bool withinBudget(SearchBudget &budget, const OpenEntry &top,
                    SearchOutcome &out);
  /// The beam (beamSeed) as an incumbent, improved locally.
  void runBeam(SearchBudget &budget, SearchOutcome &out);
  /// Closes `top` and opens its successors, unless a state closed at its
  /// position dominates it across distributions.
  void expand(const OpenEntry &top, SearchOutcome &out);
  /// `node` (with `key`) is dominated by a state closed at its position;
  /// otherwise it joins them (the first kClosedPerPosition).
  bool dominatedAcross(const Node &node, const StateKey &key);
  /// The plan of `goal` (or the incumbent's, or the seed's), improved when
  /// the search was stopped, its bound and gap.
  void finish(SearchOutcome &out, uint32_t goal, const SearchBudget &budget);
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
  /// Scratch of expand(): memory after a step, flat.
  std::vector<double> stepMem;
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
  SearchBudget budget(limits, end);
  SearchOutcome out;
  std::vector<double> zero(kMemFields * reps, 0);
  uint32_t root = add(~0u, 0, {}, zero.data(), 0, nullptr);
  open.push({h(0), 0, root});
  takeIncumbents(root);
  stepMem.resize(kMemFields * reps);
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
    if (!withinBudget(budget, top, out))
      break;
    open.pop();
    expand(top, out);
  }
  finish(out, goal, budget);
  return out;
}

void AStar::takeIncumbents(uint32_t root) {
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
}

bool AStar::withinBudget(SearchBudget &budget, const OpenEntry &top,
                         SearchOutcome &out) {
  while (true) {
    switch (budget.judge({top.f, out.expansions, incumbent},
                         [&] { return tableBytes(); })) {
    case SearchBudget::Verdict::Continue:
      return true;
    case SearchBudget::Verdict::RunBeam:
      runBeam(budget, out);
      continue;
    case SearchBudget::Verdict::Stop:
      out.capped = true;
      out.hopeless = budget.hopeless();
      out.lowerBound = top.f;
      // Greedy completion of the best open state may beat the incumbent.
      if (auto inc = greedy(top.node); inc && inc->first < incumbent) {
        incumbent = inc->first;
        incumbentNode = inc->second;
      }
      return false;
    }
  }
}

void AStar::runBeam(SearchBudget &budget, SearchOutcome &out) {
  // Its states count as expansions.
  uint64_t before = out.expansions;
  auto sd = beamSeed(space, budget.beamWidth(), limits.memoryPruning,
                     &out.expansions);
  budget.beamRan(out.expansions - before);
  if (sd)
    improvePlan(space, *sd, limits.memoryPruning, kDefaultImproveSteps / 4);
  if (sd && sd->cost < incumbent) {
    incumbent = sd->cost;
    incumbentNode = ~0u;
    seed = std::move(sd);
  }
}

bool AStar::dominatedAcross(const Node &node, const StateKey &key) {
  // Its g is no larger: same h, popped earlier.
  if (closedAt.empty())
    closedAt.resize(end + 1);
  auto &list = closedAt[node.pos];
  Profile profile = profileOf(space, node.pos, key);
  for (auto &[p, g] : list)
    if (dominates(p, g, profile, node.g))
      return true;
  if (list.size() < kClosedPerPosition)
    list.emplace_back(std::move(profile), node.g);
  return false;
}

void AStar::expand(const OpenEntry &top, SearchOutcome &out) {
  Node node = nodes[top.node];
  nodes[top.node].closed = true;
  StateKey key = keyOf(node);
  // Dominance across distributions (cost-only dominance runs only).
  if (!pareto && dominatedAcross(node, key)) {
    ++crossDominated;
    return;
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
    after(node, *r, stepMem.data());
    if (!fits(stepMem.data(), node.pos + 1)) {
      ++memoryPruned;
      return;
    }
    uint32_t id = add(top.node, node.pos + 1, r->next, stepMem.data(), g, &c);
    // Pathmax: a child's completion is one of its parent's (h need not
    // be consistent).
    if (id != ~0u)
      open.push({std::max(top.f, g + hNext), g, id});
  });
}

void AStar::finish(SearchOutcome &out, uint32_t goal,
                   const SearchBudget &budget) {
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
  out.stateBytes = std::max(budget.peakTableBytes(), tableBytes());
  if (!out.capped)
    out.lowerBound = out.cost;
  else
    out.lowerBound = std::max(out.lowerBound, h(0));
  out.gap = out.found && out.cost > 0
                ? std::max(0.0, (out.cost - out.lowerBound) / out.cost)
                : 0;
  if (!out.found)
    out.gap = 0;
  out.wallSeconds = budget.seconds();
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
