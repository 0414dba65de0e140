//===- MemoryTally.h - Memory of a partial plan ---------------*- C++ -*-===//
//
// docs/Synthesis.md "Recomputation": what one step does to a device's memory
// (StepMemory), the memory of a partial plan (MemoryTally) and what a fixed
// sequence of steps does to any tally (TallyEffect). Kept apart from the
// space: the searches carry tallies, the space only produces steps.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_MEMORYTALLY_H
#define WEFT_SYNTH_MEMORYTALLY_H

#include "llvm/ADT/SmallVector.h"
#include <algorithm>

namespace weft::synth {

/// Per representative figures of a step.
using RepVector = llvm::SmallVector<double, 8>;

/// What one step does to memory, per representative.
struct StepMemory {
  /// Memory committed by the step (added).
  RepVector committed;
  /// Largest transient buffer of the step.
  RepVector transient;
  /// The op is recomputed: `run` (its saved bytes) joins the open run.
  /// Otherwise the step closes the open run, unless it is `neutral` (no
  /// backward pass).
  bool recompute = false, neutral = false;
  RepVector run;
};

/// Memory of a partial plan per representative: committed bytes
/// (parameters, optimizer state, kept activations and checkpoints), the
/// largest transient so far (closed runs included) and the open run's saved
/// bytes. Peak = committed + max(transient, run).
struct MemoryTally {
  RepVector committed, transient, run;
  MemoryTally() = default;
  explicit MemoryTally(unsigned reps)
      : committed(reps, 0), transient(reps, 0), run(reps, 0) {}
  unsigned size() const { return committed.size(); }
  /// After one step.
  void add(const StepMemory &r) {
    for (unsigned k = 0; k < size(); ++k) {
      committed[k] += r.committed[k];
      transient[k] = std::max(transient[k], r.transient[k]);
      if (r.recompute) {
        run[k] += r.run[k];
      } else if (!r.neutral) {
        transient[k] = std::max(transient[k], run[k]);
        run[k] = 0;
      }
    }
  }
  MemoryTally after(const StepMemory &r) const {
    MemoryTally m = *this;
    m.add(r);
    return m;
  }
  double peak(unsigned k) const {
    return committed[k] + std::max(transient[k], run[k]);
  }
  /// Flat layout (committed, transient, run) for compact tables.
  static constexpr unsigned kFields = 3;
  void store(double *out) const {
    for (unsigned k = 0; k < size(); ++k) {
      out[k] = committed[k];
      out[size() + k] = transient[k];
      out[2 * size() + k] = run[k];
    }
  }
  static MemoryTally load(const double *in, unsigned reps) {
    MemoryTally m(reps);
    for (unsigned k = 0; k < reps; ++k) {
      m.committed[k] = in[k];
      m.transient[k] = in[reps + k];
      m.run[k] = in[2 * reps + k];
    }
    return m;
  }
};

/// What a fixed sequence of steps does to any memory tally, so that a
/// trial which rejoins a plan's state can tell whether the rest of the plan
/// fits without replaying it (lib/Synth/LocalSearch.cpp). Per
/// representative: committed grows by `committed`; the largest transient
/// becomes max(transient, largest, run + carried) when the sequence closes
/// the open run (`carried`: the run it adds before its first closing step)
/// and max(transient, largest) otherwise; the open run becomes `openRun`
/// when it closes, else run + `openRun`.
struct TallyEffect {
  RepVector committed, largest, carried, openRun;
  bool closes = false;
  TallyEffect() = default;
  /// No steps.
  explicit TallyEffect(unsigned reps)
      : committed(reps, 0), largest(reps, 0), carried(reps, 0),
        openRun(reps, 0) {}
  /// The effect of `r` followed by this sequence.
  void prepend(const StepMemory &r) {
    for (unsigned k = 0; k < committed.size(); ++k) {
      committed[k] += r.committed[k];
      largest[k] = std::max(largest[k], r.transient[k]);
      if (r.recompute) {
        (closes ? carried : openRun)[k] += r.run[k];
      } else if (!r.neutral) {
        if (closes)
          largest[k] = std::max(largest[k], carried[k]);
        carried[k] = 0;
      }
    }
    if (!r.recompute && !r.neutral)
      closes = true;
  }
  /// `m` after the sequence: what MemoryTally::add step by step gives.
  MemoryTally applyTo(const MemoryTally &m) const {
    MemoryTally out = m;
    for (unsigned k = 0; k < committed.size(); ++k) {
      out.committed[k] += committed[k];
      out.transient[k] = std::max(m.transient[k], largest[k]);
      if (closes) {
        out.transient[k] = std::max(out.transient[k], m.run[k] + carried[k]);
        out.run[k] = openRun[k];
      } else {
        out.run[k] = m.run[k] + openRun[k];
      }
    }
    return out;
  }
};

} // namespace weft::synth

#endif // WEFT_SYNTH_MEMORYTALLY_H
