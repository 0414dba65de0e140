//===- SearchBudget.cpp - When the plain A* stops -------------------------===//
//
// The beam runs only when the A* alone looks unlikely to finish: when it
// would stop as hopeless, or once three quarters of a limit are spent (the
// rest is the beam's). docs/Synthesis.md "Budgets and stop rules".
//
//===----------------------------------------------------------------------===//

#include "SearchBudget.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>

using namespace weft;
using namespace weft::synth;

namespace {
/// The hopeless rule's first probe, in the A*'s own expansions.
constexpr uint64_t kFirstProbe = 2048;
} // namespace

SearchBudget::SearchBudget(const SearchLimits &limits, unsigned positions)
    : limits(limits), start(std::chrono::steady_clock::now()),
      horizon(limits.horizon ? std::max(limits.horizon, limits.maxExpansions)
                             : limits.maxExpansions),
      // About a quarter of an expansion budget, skipped when that is under
      // 8 states per position.
      beamBudget(horizon ? horizon / 4 : 25600), positions(positions),
      beamDone_(beamBudget < 8 * uint64_t(positions)), probeAt(kFirstProbe) {}

double SearchBudget::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

unsigned SearchBudget::beamWidth() const {
  return unsigned(
      std::clamp<uint64_t>(beamBudget / std::max(1u, positions), 8, 256));
}

void SearchBudget::beamRan(uint64_t expansions) {
  beamDone_ = true;
  beamExpansions_ += expansions;
}

SearchBudget::Verdict
SearchBudget::judge(const Progress &now,
                    llvm::function_ref<uint64_t()> tableBytes) {
  if (stage_ == Stage::Share) {
    stage_ = Stage::Limit;
    if (shareSpent(now))
      return Verdict::RunBeam;
  }
  if (stage_ == Stage::Limit) {
    stop_ = limits.maxExpansions && now.expansions >= limits.maxExpansions;
    if (!probeF)
      probeF = now.bound;
    stage_ = Stage::Clock;
    if (probeDue(now)) {
      stage_ = Stage::Probe;
      // The beam may lower the incumbent: it runs before the verdict.
      if (!beamDone_ && hopelessAt(now))
        return Verdict::RunBeam;
    }
  }
  if (stage_ == Stage::Probe) {
    settleProbe(now);
    stage_ = Stage::Clock;
  }
  if (stage_ == Stage::Clock) {
    clockDue_ = !stop_ && (checks++ & 255) == 0;
    if (clockDue_) {
      seconds_ = seconds();
      bytes_ = tableBytes();
      if (!beamDone_ && nearLimit()) {
        stage_ = Stage::ClockAfterBeam;
        return Verdict::RunBeam;
      }
    }
  } else if (stage_ == Stage::ClockAfterBeam) {
    seconds_ = seconds();
  }
  if (clockDue_)
    settleClock(now);
  stage_ = Stage::Share;
  return stop_ ? Verdict::Stop : Verdict::Continue;
}

bool SearchBudget::shareSpent(const Progress &now) const {
  return !beamDone_ && horizon && now.expansions >= horizon - beamBudget;
}

bool SearchBudget::probeDue(const Progress &now) {
  done_ = now.expansions - beamExpansions_;
  if (stop_ || !limits.stopWhenHopeless || !limits.maxExpansions ||
      done_ < probeAt)
    return false;
  rate_ = (now.bound - *probeF) / double(done_ - probeFrom);
  return true;
}

double SearchBudget::expansionsLeft(const Progress &now) const {
  return double(horizon - std::min(horizon, now.expansions));
}

bool SearchBudget::hopelessAt(const Progress &now) const {
  return now.bound + 4 * rate_ * expansionsLeft(now) < now.incumbent;
}

void SearchBudget::settleProbe(const Progress &now) {
  stop_ = hopeless_ = hopelessAt(now);
  if (stop_ && limits.progress)
    limits.progress(
        llvm::formatv("synthesis: search stopped after {0} expansions: "
                      "its bound rose {1:e2} s per expansion, so the "
                      "{2:f6} s to the best plan would not close in "
                      "the {3} expansions left",
                      now.expansions, rate_, now.incumbent - now.bound,
                      uint64_t(expansionsLeft(now)))
            .str());
  probeF = now.bound;
  probeFrom = done_;
  probeAt = 2 * done_;
}

bool SearchBudget::nearLimit() const {
  return (limits.timeLimitSeconds > 0 &&
          seconds_ >= 0.75 * limits.timeLimitSeconds) ||
         (limits.maxStateBytes && bytes_ >= limits.maxStateBytes / 4 * 3);
}

void SearchBudget::settleClock(const Progress &now) {
  stop_ = limits.timeLimitSeconds > 0 && seconds_ >= limits.timeLimitSeconds;
  peakBytes_ = std::max(peakBytes_, bytes_);
  stop_ |= limits.maxStateBytes && bytes_ >= limits.maxStateBytes;
  if (limits.progress && seconds_ >= lastReport) {
    lastReport = seconds_ + 1;
    limits.progress(llvm::formatv("synthesis: {0} expansions ({1}/s), "
                                  "best {2:f6} s, bound {3:f6} s",
                                  now.expansions,
                                  uint64_t(now.expansions / seconds_),
                                  now.incumbent, now.bound)
                        .str());
  }
}
