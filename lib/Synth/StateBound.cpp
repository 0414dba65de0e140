//===- StateBound.cpp - The chain bound charged from a state's holdings ---===//
//
// docs/Synthesis.md "State bound". heuristic(p) drops the chain edges whose
// producer is already done: the value they carry is live at p, held in some
// set of distributions, and whatever the consumer's option it pays the
// relayout from what is held. heuristic(p, key) charges those edges from the
// held set, and every other live value its dearest remaining use's cheapest
// relayout; each value is charged once, each relayout at its least over
// devices, so the sum stays below what any completion pays (a step's max over
// devices of its communication is at least its storage's share plus the least
// over devices of each relayout).
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/SearchSpace.h"
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

/// The least seconds of making `value` available as `want` from `held`
/// (0 when held or without a precondition; infinity when impossible).
static double relayFrom(SearchSpace &s, unsigned value,
                        const SearchSpace::HeldSet &held, DistId want) {
  if (want == kNoDist || llvm::is_contained(held.dists, want))
    return 0;
  const RepVector *c = s.relayoutSeconds(value, held.dists.front(), want,
                                         /*zero3=*/false);
  return c ? *std::min_element(c->begin(), c->end()) : kInf;
}

double SearchSpace::entryBound(unsigned q, unsigned value, HeldId held) {
  auto memoKey = pack(q, 0, held);
  if (memoKey)
    if (auto it = chains.entry.find(*memoKey); it != chains.entry.end())
      return it->second;
  const HeldSet &set = heldSets[held];
  unsigned slot = chains.edgeSlot[q];
  double best = kInf;
  for (auto [o, option] : llvm::enumerate(ops[q].options))
    best = std::min(best, chains.best[q][o] + relayFrom(*this, value, set,
                                                        option.operands[slot]));
  if (memoKey)
    chains.entry[*memoKey] = best;
  return best;
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

double SearchSpace::dearestUse(unsigned value, unsigned k, HeldId held) {
  auto memoKey = pack(value, k, held);
  if (memoKey)
    if (auto it = chains.dearest.find(*memoKey); it != chains.dearest.end())
      return it->second;
  llvm::ArrayRef<unsigned> uses = values[value].uses;
  double most = 0;
  for (unsigned i = k; i < uses.size(); ++i)
    most = std::max(most, useBound(value, uses[i], held));
  if (memoKey)
    chains.dearest[*memoKey] = most;
  return most;
}

double SearchSpace::heuristic(unsigned p, const StateKey &key) {
  if (chains.chainH.empty() || p >= numPositions())
    return heuristic(p);
  double chain = chains.chainH[p];
  for (auto [k, v] : llvm::enumerate(liveAt[p])) {
    const ValueInfo &info = values[v];
    // Leaves (parameters may be stored split and gathered) are left out.
    if (info.defPos < 0 || k >= key.size())
      continue;
    int q = chains.consumer[v];
    if (q >= int(p)) {
      chain += entryBound(unsigned(q), v, key[k]) - chains.suffix[q];
      continue;
    }
    unsigned first = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
                     info.uses.begin();
    chain += dearestUse(v, first, key[k]);
  }
  return std::max(chains.otherH[p], chain);
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
