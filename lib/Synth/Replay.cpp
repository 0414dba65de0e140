//===- Replay.cpp - A plan's cost and memory from its choices -------------===//
//
// The searches keep plans as one choice per position; replay() runs them
// through the space's transition function from the start again.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"

using namespace weft;
using namespace weft::synth;

std::optional<double> weft::synth::replay(SearchSpace &space,
                                          llvm::ArrayRef<StepChoice> choices,
                                          std::vector<StepDetail> *details,
                                          RepVector *peakMemory) {
  if (choices.size() != space.numPositions())
    return std::nullopt;
  StateKey key;
  double total = 0;
  unsigned reps = space.numReps();
  MemoryTally memory(reps);
  for (unsigned p = 0; p < choices.size(); ++p) {
    StepDetail detail;
    auto r = space.step(p, key, choices[p], details ? &detail : nullptr);
    if (!r)
      return std::nullopt;
    total += r->cost;
    memory.add(*r);
    key = std::move(r->next);
    if (details)
      details->push_back(std::move(detail));
  }
  if (peakMemory) {
    peakMemory->clear();
    for (unsigned i = 0; i < reps; ++i)
      peakMemory->push_back(memory.peak(i));
  }
  return total;
}
