//===- TreeBound.cpp - The op floors, the tree bound and the state bound --===//
//
// docs/Synthesis.md "Tree bound" and "State bound". build() prices each op
// from its most favourable state (its cost floor) and lays the ops out as a
// forest below the values they read; heuristic(p) counts the subtrees
// below values already produced at their least. heuristic(p, key) charges
// each live value's remaining uses from what the state holds: its tree
// consumers chosen together with the dearest relayout any of them or of its
// other uses needs (groupBound). Each value is charged once, each relayout
// at relayBound (the least over devices plus a share of what the dearest
// device pays beyond the step's own spread), so the sum stays below what
// any completion pays.
//
//===----------------------------------------------------------------------===//

#include "TreeBound.h"
#include "StarBound.h"
#include <cmath>
#include <limits>
#include <map>

using namespace weft;
using namespace weft::synth;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

/// An exact memo key, or none when a field does not fit (20 + 20 + 24 bits).
std::optional<uint64_t> pack(unsigned a, unsigned b, HeldId h) {
  if (a >= (1u << 20) || b >= (1u << 20) || h >= (1u << 24))
    return std::nullopt;
  return (uint64_t(a) << 44) | (uint64_t(b) << 24) | uint64_t(h);
}
} // namespace

//===----------------------------------------------------------------------===//
// Building: op floors and the forest
//===----------------------------------------------------------------------===//

void TreeBound::build() {
  unsigned n = s.ops_.size();
  unsigned reps = s.numReps();
  // The cost floor of each op: the least over its choices of the step's
  // own cost from the most favourable state (exactNodeCosts); each step
  // costs at least its op's floor, so the suffix sum is an admissible,
  // consistent h (and never below the max over devices of the summed
  // cheapest compute). A space no plan of which fits memory (its floor
  // exceeds a capacity) is never searched with memory pruning: it skips
  // these floors and the tree bound, and its h is the compute bound.
  std::vector<double> &costFloor = s.floorSuffix_;
  costFloor.assign(n + 1, 0);
  s.opFloor_.assign(n, 0);
  for (unsigned r = 0; r < reps; ++r)
    if (s.memoryFloor_[0][r] > s.capacity_[r])
      return;
  std::vector<std::vector<double>> nodeCost(n);
  spread.assign(n, {});
  for (int p = int(n) - 1; p >= 0; --p) {
    nodeCost[p] = exactNodeCosts(unsigned(p));
    double leastCost = std::numeric_limits<double>::infinity();
    for (double c : nodeCost[p])
      leastCost = std::min(leastCost, c);
    s.opFloor_[p] = std::isfinite(leastCost) ? leastCost : 0;
    costFloor[p] = costFloor[p + 1] + s.opFloor_[p];
  }
  for (unsigned p = 0; p <= n; ++p)
    s.suffixH_[p] = std::max(s.suffixH_[p], costFloor[p]);
  buildTree(nodeCost);
}

std::vector<double> TreeBound::exactNodeCosts(unsigned p) {
  const OpInfo &op = s.ops_[p];
  llvm::ArrayRef<unsigned> live = s.liveAt_[p];
  HeldId any = s.internHeld({0, {0}});
  std::vector<double> costs(op.options.size(),
                            std::numeric_limits<double>::infinity());
  std::vector<double> &spreadOf = spread[p];
  spreadOf.assign(op.options.size(), 0);
  StateKey key;
  int keyOption = -1;
  s.forEachChoice(p, [&](const StepChoice &c) {
    if (keyOption != int(c.option)) {
      // Each operand held as the option needs it (a leaf used here first
      // takes its storage in step(), whatever the key holds).
      keyOption = c.option;
      key.assign(live.size(), any);
      const OpOption &option = op.options[c.option];
      for (auto [k, v] : llvm::enumerate(live)) {
        SearchSpace::HeldSet set;
        for (auto [i, w] : llvm::enumerate(op.operands))
          if (w == v && option.operands[i] != kNoDist &&
              !llvm::is_contained(set.dists, option.operands[i]))
            set.dists.push_back(option.operands[i]);
        if (!set.dists.empty()) {
          std::sort(set.dists.begin() + 1, set.dists.end());
          key[k] = s.internHeld(set);
        }
      }
    }
    StepDetail detail;
    if (auto r = s.step(p, key, c, &detail)) {
      costs[c.option] = std::min(costs[c.option], r->cost);
      spreadOf[c.option] =
          std::max(spreadOf[c.option], detail.commSeconds - detail.commLeast);
    }
  });
  return costs;
}

/// The tree bound (docs/Synthesis.md): each op hangs below the producer of
/// one op-result operand (one whose value has no consumer below it yet,
/// else the largest), so the ops form a forest whose subtrees are disjoint. A
/// plan pays, per op, at least its node cost (compute, least gradient sync,
/// least optimizer) and, per value, at least its dearest relayout from its own
/// distribution: every relayout of a value starts there and each target is made
/// once, and each relayout is charged at most what its step pays for it
/// (relayBound). The consumers below one value are chosen together (groupBound,
/// lib/Synth/StarBound.h) and pay its dearest relayout once, the value's other
/// uses bounding it from below. A backward DP gives the least cost of each
/// subtree per option; h(p) sums, over the ops >= p whose parent is done (or
/// that have none), their subtree's least: admissible.
void TreeBound::buildTree(const std::vector<std::vector<double>> &nodeCost) {
  unsigned n = s.ops_.size();
  std::vector<int> parent(n, -1);
  kids.assign(s.values_.size(), {});
  share.assign(n, 1);
  for (unsigned q = 0; q < n; ++q) {
    const OpInfo &op = s.ops_[q];
    // A value without consumers below it first (the residual stream then
    // runs through each block's branch, not past it), the largest first.
    int bestSlot = -1;
    unsigned results = 0;
    std::pair<bool, double> bestRank{false, -1};
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const ValueInfo &info = s.values_[v];
      if (info.defPos < 0)
        continue;
      ++results;
      double size = 1;
      for (int64_t d : info.shape)
        size *= double(d);
      std::pair<bool, double> rank{kids[v].empty(), size};
      if (rank > bestRank) {
        bestRank = rank;
        bestSlot = int(i);
      }
    }
    share[q] = 1.0 / std::max(1u, results);
    if (bestSlot < 0)
      continue;
    unsigned v = op.operands[bestSlot];
    parent[q] = s.values_[v].defPos;
    kids[v].push_back(q);
  }
  // best[q][o]: least cost of q's subtree with q at option o; the subtrees
  // below q's results are done (their ops come later).
  best.assign(n, {});
  suffix.assign(n, 0);
  for (int q = int(n) - 1; q >= 0; --q) {
    const OpInfo &op = s.ops_[q];
    best[q] = nodeCost[q];
    for (auto [r, v] : llvm::enumerate(op.results)) {
      if (s.values_[v].uses.empty())
        continue;
      std::map<DistId, double> byResult;
      for (auto [o, option] : llvm::enumerate(op.options)) {
        DistId u = option.results[r];
        auto [it, inserted] = byResult.try_emplace(u, 0);
        if (inserted)
          it->second = groupBound(v, 0, s.internHeld({0, {u}}));
        best[q][o] += it->second;
      }
    }
    double m = std::numeric_limits<double>::infinity();
    for (double b : best[q])
      m = std::min(m, b);
    suffix[q] = std::isfinite(m) ? m : 0;
  }
  // h(p) = Σ over ops q >= p whose parent is < p (or none) of suffix[q].
  std::vector<double> diff(n + 2, 0);
  for (unsigned q = 0; q < n; ++q) {
    unsigned from = parent[q] >= 0 ? unsigned(parent[q]) + 1 : 0;
    diff[from] += suffix[q];
    diff[q + 1] -= suffix[q];
  }
  double h = 0;
  otherH = s.suffixH_;
  treeH.assign(n + 1, 0);
  for (unsigned p = 0; p <= n; ++p) {
    h += diff[p];
    treeH[p] = std::max(0.0, h);
    s.suffixH_[p] = std::max(s.suffixH_[p], treeH[p]);
  }
}

//===----------------------------------------------------------------------===//
// Charging from a state
//===----------------------------------------------------------------------===//

const TreeBound::Claims &TreeBound::claimsOf(unsigned value) {
  if (claims.empty())
    claims.resize(s.values_.size());
  std::optional<Claims> &out = claims[value];
  if (out)
    return *out;
  out.emplace();
  for (unsigned u : s.values_[value].uses)
    for (auto [o, option] : llvm::enumerate(s.ops_[u].options))
      for (auto [slot, w] : llvm::enumerate(s.ops_[u].operands)) {
        if (w != value || option.operands[slot] == kNoDist)
          continue;
        auto &list = (*out)[option.operands[slot]];
        double most = spread[u][o];
        if (list.empty() || list.back().use != u)
          list.push_back({u, share[u], most});
        else
          list.back().spread = std::max(list.back().spread, most);
      }
  return *out;
}

double TreeBound::relayBound(unsigned value, DistId from, DistId to,
                             unsigned by) {
  const RepVector *c = s.relayoutSeconds(value, from, to, /*zero3=*/false);
  if (!c)
    return kInf;
  auto [least, most] = std::minmax_element(c->begin(), c->end());
  if (share.empty() || *most <= *least)
    return *least;
  // The step that relays it is a use needing `to` (the first such, at `by`
  // or before); of its communication max_d(s_d + r_d + others) >= max s +
  // Σ min r + one relayout's (max r - min r - (max s - min s)), and each
  // op-result slot claims at most its share of that, so the claims of one
  // step never exceed it.
  const Claims &of = claimsOf(value);
  auto it = of.find(to);
  if (it == of.end())
    return *least;
  double excess = kInf;
  for (const Claim &x : it->second) {
    if (x.use > by)
      break;
    excess =
        std::min(excess, x.share * std::max(0.0, *most - *least - x.spread));
  }
  return *least + (std::isfinite(excess) ? excess : 0);
}

double TreeBound::relayFrom(unsigned value, const SearchSpace::HeldSet &held,
                            DistId want, unsigned by) {
  if (want == kNoDist || llvm::is_contained(held.dists, want))
    return 0;
  return relayBound(value, held.dists.front(), want, by);
}

const std::vector<TreeBound::Needs> &TreeBound::needsOf(unsigned use,
                                                        unsigned value) {
  if (needs.empty())
    needs.resize(s.ops_.size());
  auto &perValue = needs[use];
  for (auto &[v, list] : perValue)
    if (v == value)
      return list;
  std::vector<Needs> &list =
      perValue.emplace_back(value, std::vector<Needs>{}).second;
  const OpInfo &op = s.ops_[use];
  std::map<llvm::SmallVector<DistId, 2>, unsigned> index;
  for (auto [o, option] : llvm::enumerate(op.options)) {
    llvm::SmallVector<DistId, 2> dists;
    for (auto [slot, v] : llvm::enumerate(op.operands))
      if (v == value)
        dists.push_back(option.operands[slot]);
    auto [it, inserted] = index.try_emplace(dists, list.size());
    if (inserted)
      list.push_back({dists, {}});
    list[it->second].options.push_back(uint32_t(o));
  }
  return list;
}

double TreeBound::relayAll(unsigned value, const SearchSpace::HeldSet &held,
                           llvm::ArrayRef<DistId> dists, unsigned by) {
  double most = 0;
  for (DistId w : dists)
    most = std::max(most, relayFrom(value, held, w, by));
  return most;
}

double TreeBound::useBound(unsigned value, unsigned use, HeldId held) {
  auto memoKey = pack(value, use, held);
  if (memoKey)
    if (auto it = useMemo.find(*memoKey); it != useMemo.end())
      return it->second;
  const SearchSpace::HeldSet &set = s.heldSets_[held];
  double least = kInf;
  for (const Needs &n : needsOf(use, value))
    least = std::min(least, relayAll(value, set, n.dists, use));
  if (memoKey)
    useMemo[*memoKey] = least;
  return least;
}

double TreeBound::groupBound(unsigned value, unsigned k, HeldId held) {
  auto memoKey = pack(value, k, held);
  if (memoKey)
    if (auto it = groupMemo.find(*memoKey); it != groupMemo.end())
      return it->second;
  const SearchSpace::HeldSet &set = s.heldSets_[held];
  llvm::ArrayRef<unsigned> uses = s.values_[value].uses;
  llvm::ArrayRef<unsigned> below = kids[value];
  double floor = 0;
  std::vector<std::vector<StarChoice>> consumers;
  for (unsigned i = k; i < uses.size(); ++i) {
    unsigned c = uses[i];
    if (!llvm::is_contained(below, c)) {
      floor = std::max(floor, useBound(value, c, held));
      continue;
    }
    std::vector<StarChoice> &choices = consumers.emplace_back();
    for (const Needs &n : needsOf(c, value)) {
      double rest = kInf;
      for (uint32_t o : n.options)
        rest = std::min(rest, best[c][o]);
      choices.push_back({relayAll(value, set, n.dists, c), rest});
    }
  }
  double bound = starBound(consumers, floor);
  if (memoKey)
    groupMemo[*memoKey] = bound;
  return bound;
}

double TreeBound::heuristic(unsigned p, const StateKey &key) {
  if (treeH.empty() || p >= s.numPositions())
    return s.heuristic(p);
  double bound = treeH[p];
  for (auto [k, v] : llvm::enumerate(s.liveAt_[p])) {
    const ValueInfo &info = s.values_[v];
    // Leaves (parameters may be stored split and gathered) are left out.
    if (info.defPos < 0 || k >= key.size())
      continue;
    // The subtrees below v are in treeH[p] at their least; charge them
    // with v's remaining uses from what the state holds instead.
    for (unsigned c : kids[v])
      if (c >= p)
        bound -= suffix[c];
    unsigned first = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
                     info.uses.begin();
    bound += groupBound(v, first, key[k]);
  }
  return std::max(otherH[p], bound);
}

double TreeBound::blockBound(unsigned p, unsigned b, const StateKey &key) {
  double bound = std::max(0.0, s.floorSuffix_[p] - s.floorSuffix_[b]);
  for (auto [k, v] : llvm::enumerate(s.liveAt_[p])) {
    const ValueInfo &info = s.values_[v];
    if (info.defPos < 0 || k >= key.size())
      continue;
    double most = 0;
    for (unsigned u : info.uses)
      if (u >= p && u < b)
        most = std::max(most, useBound(v, u, key[k]));
    bound += most;
  }
  return bound;
}

//===----------------------------------------------------------------------===//
// SearchSpace's bounds
//===----------------------------------------------------------------------===//

double SearchSpace::heuristic(unsigned p, const StateKey &key) {
  return bound_->heuristic(p, key);
}

double SearchSpace::blockBound(unsigned p, unsigned b, const StateKey &key) {
  return bound_->blockBound(p, b, key);
}

double SearchSpace::relayBound(unsigned value, DistId from, DistId to,
                               unsigned by) {
  return bound_->relayBound(value, from, to, by);
}
