//===- StarBound.h - Least cost of a value's consumers together -*- C++ -*-===//
//
// docs/Synthesis.md "Tree bound". A value relaid to several distributions
// pays, over the plan, at least its dearest relayout: every relayout starts
// from the value's own distribution (or from what is held), and each target
// is made once. When several consumers hang below one value in the bound's
// forest, their options are chosen together: the least over one option per
// consumer of the sum of their subtree costs plus the largest relayout any
// of them needs (at least `floor`, the dearest relayout of the value's
// other uses).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_STARBOUND_H
#define WEFT_LIB_SYNTH_STARBOUND_H

#include "llvm/ADT/ArrayRef.h"
#include <vector>

namespace weft {
namespace synth {

/// One option of one consumer: the seconds of relaying the value to what the
/// option needs, and the least cost of the consumer's subtree at it.
struct StarChoice {
  double relay = 0;
  double rest = 0;
};

/// min over one choice per consumer of (Σ rest + max(floor, max relay)).
/// Infinity when a consumer has no finite choice. O(K log K) for K choices.
double starBound(llvm::ArrayRef<std::vector<StarChoice>> consumers,
                 double floor);

} // namespace synth
} // namespace weft

#endif // WEFT_LIB_SYNTH_STARBOUND_H
