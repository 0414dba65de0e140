//===- BlockClasses.h - Repeated blocks of the order (lib/Synth internal) -===//
//
// docs/Synthesis.md "Memoisation of repeated blocks": the order is cut at
// positions of small live set (SearchSpace::cuts); two blocks between cuts
// are of one class when their structure is the same (per op its option
// table, where every operand comes from in block-relative terms, the live
// sets, what later uses require of the exit's values). Names never enter.
// Used by the memoised search (one solve per class and entry) and by local
// improvement (one change tried in every block of a class).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_BLOCKCLASSES_H
#define WEFT_LIB_SYNTH_BLOCKCLASSES_H

#include "weft/Synth/SearchSpace.h"
#include <cstdint>
#include <map>
#include <vector>

namespace weft::synth {

/// Class ids of blocks [a, b) of one space, numbered from 0 in the order
/// they are first asked for.
class BlockClasses {
public:
  explicit BlockClasses(const SearchSpace &space) : space(space) {}
  /// The class of block [a, b): equal for two blocks exactly when their
  /// structural signatures are equal.
  unsigned classOf(unsigned a, unsigned b);
  /// Classes seen so far.
  unsigned size() const { return blockClasses.size(); }

private:
  unsigned opTableId(unsigned p);
  const SearchSpace &space;
  std::map<std::vector<uint64_t>, unsigned> opTables, blockClasses;
  std::vector<int> opTableOf;
};

/// The blocks between `space.cuts()` of each class that has two or more:
/// their first positions, in order (blocks of one class have one length).
struct RepeatedBlocks {
  unsigned length = 0;
  std::vector<unsigned> starts;
};
std::vector<RepeatedBlocks> repeatedBlocks(const SearchSpace &space);

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_BLOCKCLASSES_H
