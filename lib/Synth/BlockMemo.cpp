//===- BlockMemo.cpp - Repeated blocks memoised, outer DP -----------------===//
//
// docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"

using namespace weft;
using namespace weft::synth;

SearchOutcome weft::synth::search(SearchSpace &space,
                                  const SearchLimits &limits) {
  return searchAStar(space, limits);
}
