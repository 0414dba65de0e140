//===- Beam.cpp - A beam over the positions: an incumbent -----------------===//
//
// docs/Synthesis.md "Budgets and stop rules": when the plain A* looks unlikely
// to finish, a beam keeping the cheapest states per position (duplicates
// merged) gives it an incumbent for a share of its expansions.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"
#include <unordered_map>

using namespace weft;
using namespace weft::synth;

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
