//===- StateBound.cpp - The tree bound charged from a state's holdings ----===//
//
// docs/Synthesis.md "Tree bound" and "State bound". heuristic(p) counts the
// subtrees below values already produced at their least; heuristic(p, key)
// charges each live value's remaining uses from what the state holds: its
// tree consumers chosen together with the dearest relayout any of them or
// of its other uses needs (groupBound). Each value is charged once, each
// relayout at relayBound (the least over devices plus a share of what the
// dearest device pays beyond the step's own spread), so the sum stays below
// what any completion pays.
//
//===----------------------------------------------------------------------===//

#include "StarBound.h"
#include "weft/Synth/SearchSpace.h"
#include <cmath>
#include <limits>
#include <map>
#include <optional>

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

const SearchSpace::Tree::Claims &SearchSpace::claimsOf(unsigned value) {
  if (tree.claims.empty())
    tree.claims.resize(values.size());
  std::optional<Tree::Claims> &out = tree.claims[value];
  if (out)
    return *out;
  out.emplace();
  for (unsigned u : values[value].uses)
    for (auto [o, option] : llvm::enumerate(ops[u].options))
      for (auto [slot, w] : llvm::enumerate(ops[u].operands)) {
        if (w != value || option.operands[slot] == kNoDist)
          continue;
        auto &list = (*out)[option.operands[slot]];
        double spread = tree.spread[u][o];
        if (list.empty() || list.back().use != u)
          list.push_back({u, tree.share[u], spread});
        else
          list.back().spread = std::max(list.back().spread, spread);
      }
  return *out;
}

double SearchSpace::relayBound(unsigned value, DistId from, DistId to,
                               unsigned by) {
  const RepVector *c = relayoutSeconds(value, from, to, /*zero3=*/false);
  if (!c)
    return kInf;
  auto [least, most] = std::minmax_element(c->begin(), c->end());
  if (tree.share.empty() || *most <= *least)
    return *least;
  // The step that relays it is a use needing `to` (the first such, at `by`
  // or before); of its communication max_d(s_d + r_d + others) >= max s +
  // Σ min r + one relayout's (max r - min r - (max s - min s)), and each
  // op-result slot claims at most its share of that, so the claims of one
  // step never exceed it.
  const Tree::Claims &claims = claimsOf(value);
  auto it = claims.find(to);
  if (it == claims.end())
    return *least;
  double excess = kInf;
  for (const Tree::Claim &x : it->second) {
    if (x.use > by)
      break;
    excess =
        std::min(excess, x.share * std::max(0.0, *most - *least - x.spread));
  }
  return *least + (std::isfinite(excess) ? excess : 0);
}

/// The least seconds of making `value` available as `want` from `held` at a
/// use at position `by` or before (0 when held or without a precondition;
/// infinity when impossible).
static double relayFrom(SearchSpace &s, unsigned value,
                        const SearchSpace::HeldSet &held, DistId want,
                        unsigned by) {
  if (want == kNoDist || llvm::is_contained(held.dists, want))
    return 0;
  return s.relayBound(value, held.dists.front(), want, by);
}

const std::vector<SearchSpace::Tree::Needs> &
SearchSpace::needsOf(unsigned use, unsigned value) {
  if (tree.needs.empty())
    tree.needs.resize(ops.size());
  auto &perValue = tree.needs[use];
  for (auto &[v, list] : perValue)
    if (v == value)
      return list;
  std::vector<Tree::Needs> &list =
      perValue.emplace_back(value, std::vector<Tree::Needs>{}).second;
  const OpInfo &op = ops[use];
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

/// The largest relayout from `held` that one grouping of needs of the use
/// at position `by` asks for.
static double relayAll(SearchSpace &s, unsigned value,
                       const SearchSpace::HeldSet &held,
                       llvm::ArrayRef<DistId> dists, unsigned by) {
  double most = 0;
  for (DistId w : dists)
    most = std::max(most, relayFrom(s, value, held, w, by));
  return most;
}

double SearchSpace::useBound(unsigned value, unsigned use, HeldId held) {
  auto memoKey = pack(value, use, held);
  if (memoKey)
    if (auto it = tree.use.find(*memoKey); it != tree.use.end())
      return it->second;
  const HeldSet &set = heldSets[held];
  double best = kInf;
  for (const Tree::Needs &n : needsOf(use, value))
    best = std::min(best, relayAll(*this, value, set, n.dists, use));
  if (memoKey)
    tree.use[*memoKey] = best;
  return best;
}

double SearchSpace::groupBound(unsigned value, unsigned k, HeldId held) {
  auto memoKey = pack(value, k, held);
  if (memoKey)
    if (auto it = tree.group.find(*memoKey); it != tree.group.end())
      return it->second;
  const HeldSet &set = heldSets[held];
  llvm::ArrayRef<unsigned> uses = values[value].uses;
  llvm::ArrayRef<unsigned> kids = tree.kids[value];
  double floor = 0;
  std::vector<std::vector<StarChoice>> consumers;
  for (unsigned i = k; i < uses.size(); ++i) {
    unsigned c = uses[i];
    if (!llvm::is_contained(kids, c)) {
      floor = std::max(floor, useBound(value, c, held));
      continue;
    }
    std::vector<StarChoice> &choices = consumers.emplace_back();
    for (const Tree::Needs &n : needsOf(c, value)) {
      double rest = kInf;
      for (uint32_t o : n.options)
        rest = std::min(rest, tree.best[c][o]);
      choices.push_back({relayAll(*this, value, set, n.dists, c), rest});
    }
  }
  double bound = starBound(consumers, floor);
  if (memoKey)
    tree.group[*memoKey] = bound;
  return bound;
}

double SearchSpace::heuristic(unsigned p, const StateKey &key) {
  if (tree.treeH.empty() || p >= numPositions())
    return heuristic(p);
  double bound = tree.treeH[p];
  for (auto [k, v] : llvm::enumerate(liveAt[p])) {
    const ValueInfo &info = values[v];
    // Leaves (parameters may be stored split and gathered) are left out.
    if (info.defPos < 0 || k >= key.size())
      continue;
    // The subtrees below v are in treeH[p] at their least; charge them
    // with v's remaining uses from what the state holds instead.
    for (unsigned c : tree.kids[v])
      if (c >= p)
        bound -= tree.suffix[c];
    unsigned first = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
                     info.uses.begin();
    bound += groupBound(v, first, key[k]);
  }
  return std::max(tree.otherH[p], bound);
}

double SearchSpace::blockBound(unsigned p, unsigned b, const StateKey &key) {
  double bound = std::max(0.0, floorSuffix_[p] - floorSuffix_[b]);
  for (auto [k, v] : llvm::enumerate(liveAt[p])) {
    const ValueInfo &info = values[v];
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
