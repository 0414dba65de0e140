//===- Dominance.h - Dominance across distributions (lib/Synth internal) ===//
//
// docs/Synthesis.md "Dominance across distributions": used by the plain A*
// and by the memoised search.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_DOMINANCE_H
#define WEFT_LIB_SYNTH_DOMINANCE_H

#include "weft/Synth/SearchSpace.h"
#include <cmath>
#include <limits>
#include <vector>

namespace weft::synth {

/// What a state's holdings cost the future, per live value and per
/// distribution a later use may require: the largest and smallest seconds
/// over devices of getting it (0 when held; infinite when impossible).
struct Profile {
  std::vector<double> hi, lo;
  llvm::SmallVector<uint8_t, 8> tags;
};

/// Cross-distribution dominance at one position. State t dominates s when
/// g_t + Σ over live values and required distributions w of
/// max(0, hi_t(w) − lo_s(w)) ≤ g_s: from t, every continuation of s is
/// possible (same options and storage) and costs at most that much more,
/// because each distribution is relaid at most once per value and a step's
/// max over devices of a sum grows by at most the sum of the per-value
/// largest differences. Memory is not compared (the memoised search is
/// memory-blind; see the file comment).
inline Profile profileOf(SearchSpace &space, unsigned p, const StateKey &key) {
  Profile out;
  constexpr double inf = std::numeric_limits<double>::infinity();
  llvm::ArrayRef<unsigned> live = space.live(p);
  for (unsigned j = 0; j < live.size(); ++j) {
    const SearchSpace::HeldSet &set = space.held(key[j]);
    out.tags.push_back(set.tag);
    bool zero3 = set.tag == 1 + unsigned(spmd::ParamStrategy::Zero3);
    for (DistId w : space.usefulAt(live[j], p)) {
      if (llvm::is_contained(set.dists, w)) {
        out.hi.push_back(0);
        out.lo.push_back(0);
        continue;
      }
      const RepVector *c =
          space.relayoutSeconds(live[j], set.dists.front(), w, zero3);
      if (!c) {
        out.hi.push_back(inf);
        out.lo.push_back(inf);
        continue;
      }
      out.hi.push_back(*std::max_element(c->begin(), c->end()));
      out.lo.push_back(*std::min_element(c->begin(), c->end()));
    }
  }
  return out;
}

inline bool dominates(const Profile &t, double gt, const Profile &s,
                      double gs) {
  if (t.tags != s.tags || t.hi.size() != s.hi.size())
    return false;
  double budget = gs - gt, sum = 0;
  if (budget < 0)
    return false;
  for (size_t i = 0; i < t.hi.size(); ++i) {
    double a = t.hi[i], b = s.lo[i];
    if (std::isinf(b))
      continue; // s can never get it either.
    if (std::isinf(a))
      return false;
    if (a > b && (sum += a - b) > budget)
      return false;
  }
  return true;
}

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_DOMINANCE_H
