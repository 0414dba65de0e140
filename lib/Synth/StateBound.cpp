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

const SearchSpace::Chains::Claims &SearchSpace::claimsOf(unsigned value) {
  if (chains.claims.empty())
    chains.claims.resize(values.size());
  std::optional<Chains::Claims> &out = chains.claims[value];
  if (out)
    return *out;
  out.emplace();
  for (unsigned u : values[value].uses)
    for (auto [o, option] : llvm::enumerate(ops[u].options))
      for (auto [slot, w] : llvm::enumerate(ops[u].operands)) {
        if (w != value || option.operands[slot] == kNoDist)
          continue;
        auto &pairs = (*out)[option.operands[slot]];
        double share = chains.share[u], spread = chains.spread[u][o];
        auto it =
            llvm::find_if(pairs, [&](auto &x) { return x.first == share; });
        if (it == pairs.end())
          pairs.push_back({share, spread});
        else
          it->second = std::max(it->second, spread);
      }
  return *out;
}

double SearchSpace::relayBound(unsigned value, DistId from, DistId to) {
  bool packs = value < (1u << 21) && from < (1u << 21) && to < (1u << 21);
  uint64_t memoKey = (uint64_t(value) << 42) | (uint64_t(from) << 21) | to;
  if (packs)
    if (auto it = chains.relay.find(memoKey); it != chains.relay.end())
      return it->second;
  const RepVector *c = relayoutSeconds(value, from, to, /*zero3=*/false);
  double bound = kInf;
  if (c) {
    auto [least, most] = std::minmax_element(c->begin(), c->end());
    // The step that relays it needs `to` in some slot; of its
    // communication max_d(s_d + r_d + others) >= max s + Σ min r + one
    // relayout's (max r - min r - (max s - min s)), and each op-result slot
    // claims at most its share of that, so the claims of one step never
    // exceed it.
    double excess = 0;
    if (!chains.share.empty()) {
      excess = kInf;
      for (auto [share, spread] : claimsOf(value).lookup(to))
        excess =
            std::min(excess, share * std::max(0.0, *most - *least - spread));
    }
    bound = *least + (std::isfinite(excess) ? excess : 0);
  }
  if (packs)
    chains.relay[memoKey] = bound;
  return bound;
}

/// The least seconds of making `value` available as `want` from `held`
/// (0 when held or without a precondition; infinity when impossible).
static double relayFrom(SearchSpace &s, unsigned value,
                        const SearchSpace::HeldSet &held, DistId want) {
  if (want == kNoDist || llvm::is_contained(held.dists, want))
    return 0;
  return s.relayBound(value, held.dists.front(), want);
}

double SearchSpace::useBound(unsigned value, unsigned use, HeldId held) {
  auto memoKey = pack(value, use, held);
  if (memoKey)
    if (auto it = chains.use.find(*memoKey); it != chains.use.end())
      return it->second;
  const HeldSet &set = heldSets[held];
  const OpInfo &op = ops[use];
  double best = kInf;
  for (const OpOption &option : op.options) {
    double cost = 0;
    for (auto [i, v] : llvm::enumerate(op.operands))
      if (v == value)
        cost = std::max(cost, relayFrom(*this, value, set, option.operands[i]));
    best = std::min(best, cost);
  }
  if (memoKey)
    chains.use[*memoKey] = best;
  return best;
}

double SearchSpace::groupBound(unsigned value, unsigned k, HeldId held) {
  auto memoKey = pack(value, k, held);
  if (memoKey)
    if (auto it = chains.group.find(*memoKey); it != chains.group.end())
      return it->second;
  const HeldSet &set = heldSets[held];
  llvm::ArrayRef<unsigned> uses = values[value].uses;
  llvm::ArrayRef<unsigned> kids = chains.kids[value];
  double floor = 0;
  std::vector<std::vector<StarChoice>> consumers;
  for (unsigned i = k; i < uses.size(); ++i) {
    unsigned c = uses[i];
    if (!llvm::is_contained(kids, c)) {
      floor = std::max(floor, useBound(value, c, held));
      continue;
    }
    const OpInfo &op = ops[c];
    std::vector<StarChoice> &choices = consumers.emplace_back();
    for (auto [o, option] : llvm::enumerate(op.options)) {
      double relay = 0;
      for (auto [slot, w] : llvm::enumerate(op.operands))
        if (w == value)
          relay = std::max(relay,
                           relayFrom(*this, value, set, option.operands[slot]));
      choices.push_back({relay, chains.best[c][o]});
    }
  }
  double bound = starBound(consumers, floor);
  if (memoKey)
    chains.group[*memoKey] = bound;
  return bound;
}

double SearchSpace::heuristic(unsigned p, const StateKey &key) {
  if (chains.chainH.empty() || p >= numPositions())
    return heuristic(p);
  double tree = chains.chainH[p];
  for (auto [k, v] : llvm::enumerate(liveAt[p])) {
    const ValueInfo &info = values[v];
    // Leaves (parameters may be stored split and gathered) are left out.
    if (info.defPos < 0 || k >= key.size())
      continue;
    // The subtrees below v are in chainH[p] at their least; charge them
    // with v's remaining uses from what the state holds instead.
    for (unsigned c : chains.kids[v])
      if (c >= p)
        tree -= chains.suffix[c];
    unsigned first = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
                     info.uses.begin();
    tree += groupBound(v, first, key[k]);
  }
  return std::max(chains.otherH[p], tree);
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
