//===- SearchBudget.h - When the plain A* stops ---------------*- C++ -*-===//
//
// docs/Synthesis.md "Budgets and stop rules": the stop rules
// of one plain A* run in one object. Before each expansion the search asks
// judge(); the answer is to go on, to run the beam first (an incumbent
// bought with a share of the budget), or to stop. The rules are judged on
// expansions where they can be (so stops are deterministic), on wall time
// and table bytes where the limits ask for them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_SEARCHBUDGET_H
#define WEFT_LIB_SYNTH_SEARCHBUDGET_H

#include "weft/Synth/Search.h"
#include <chrono>
#include <optional>

namespace weft::synth {

class SearchBudget {
public:
  enum class Verdict { Continue, RunBeam, Stop };
  /// The search before one expansion.
  struct Progress {
    /// The best f on the open list.
    double bound;
    /// Expansions so far, the beam's included.
    uint64_t expansions;
    /// The best plan's cost so far.
    double incumbent;
  };

  /// Starts the clock. `positions`: the program's length (the beam's width
  /// is its share of the budget per position).
  SearchBudget(const SearchLimits &limits, unsigned positions);

  /// Judges the rules in order: the beam's share of the expansions spent;
  /// the expansion limit; the hopeless rule (the beam first when it has not
  /// run); wall time and table bytes, checked on the first call and every
  /// 256th (the beam first at three quarters of either). After RunBeam the
  /// caller runs the beam, reports it (beamRan) and asks again with the
  /// same bound: the rules already judged are not judged again.
  Verdict judge(const Progress &now, llvm::function_ref<uint64_t()> tableBytes);
  /// States per position the beam keeps: about a quarter of the budget,
  /// 8 to 256.
  unsigned beamWidth() const;
  /// The beam ran and spent `expansions`.
  void beamRan(uint64_t expansions);
  /// The stop was the hopeless rule.
  bool hopeless() const { return hopeless_; }
  /// The largest table size seen at a check.
  uint64_t peakTableBytes() const { return peakBytes_; }
  /// Wall seconds since the budget started.
  double seconds() const;

private:
  /// Where judge() resumes after the beam.
  enum class Stage { Share, Limit, Probe, Clock, ClockAfterBeam };
  /// The expansions left but a quarter (the beam's share) are spent.
  bool shareSpent(const Progress &now) const;
  /// The hopeless rule is due: its rate taken. Sets `done_` and `rate_`.
  bool probeDue(const Progress &now);
  /// At the rate the bound rose over the last doubling of the expansions,
  /// four times over for the expansions left, it stays short of the
  /// incumbent.
  bool hopelessAt(const Progress &now) const;
  double expansionsLeft(const Progress &now) const;
  /// The hopeless rule's verdict and its next probe.
  void settleProbe(const Progress &now);
  /// Three quarters of the time or table limit are spent.
  bool nearLimit() const;
  /// The time and table limits' verdict, and a progress line once a second.
  void settleClock(const Progress &now);

  const SearchLimits &limits;
  std::chrono::steady_clock::time_point start;
  /// The budget the A* plans for (the beam's share, the hopeless rule's
  /// expansions left); maxExpansions may stop it before.
  uint64_t horizon;
  uint64_t beamBudget;
  unsigned positions;
  bool beamDone_;
  /// The expansions of the beam (left out of the A*'s own).
  uint64_t beamExpansions_ = 0;
  bool hopeless_ = false;
  uint64_t peakBytes_ = 0;
  double lastReport = 1;
  uint64_t checks = 0;
  /// The hopeless rule: the bound at the last probe (the first is the
  /// root's f) and where it was taken (in the A*'s own expansions).
  uint64_t probeAt, probeFrom = 0;
  std::optional<double> probeF;

  /// One judgement, across a beam.
  Stage stage_ = Stage::Share;
  bool stop_ = false;
  /// The A*'s own expansions and the bound's rate at a probe.
  uint64_t done_ = 0;
  double rate_ = 0;
  /// Whether this judgement checks the clock, and what it measured.
  bool clockDue_ = false;
  double seconds_ = 0;
  uint64_t bytes_ = 0;
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_SEARCHBUDGET_H
