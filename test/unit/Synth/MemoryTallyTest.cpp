//===- MemoryTallyTest.cpp - A step sequence's effect on a memory tally ---===//
//
// TallyEffect (include/weft/Synth/SearchSpace.h) summarises what a fixed
// sequence of steps does to any MemoryTally; local improvement relies on it
// to judge memory without replaying the rest of a plan. It must agree with
// MemoryTally::add applied step by step, for every entry tally.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/SearchSpace.h"
#include "gtest/gtest.h"
#include <random>

using namespace weft;
using namespace weft::synth;

namespace {

StepResult randomStep(std::mt19937 &rng, unsigned reps) {
  std::uniform_int_distribution<int> kind(0, 2), bytes(0, 100);
  StepResult r;
  int k = kind(rng);
  r.recompute = k == 0;
  r.neutral = k == 1;
  for (unsigned i = 0; i < reps; ++i) {
    r.committed.push_back(bytes(rng));
    r.transient.push_back(bytes(rng));
    r.run.push_back(r.recompute ? bytes(rng) : 0);
  }
  return r;
}

MemoryTally randomTally(std::mt19937 &rng, unsigned reps) {
  std::uniform_int_distribution<int> bytes(0, 300);
  MemoryTally m(reps);
  for (unsigned i = 0; i < reps; ++i) {
    m.committed[i] = bytes(rng);
    m.transient[i] = bytes(rng);
    m.run[i] = bytes(rng);
  }
  return m;
}

TEST(MemoryTallyTest, EffectOfEverySuffixIsStepByStep) {
  std::mt19937 rng(7);
  constexpr unsigned kReps = 3;
  for (int trial = 0; trial < 300; ++trial) {
    unsigned n = trial % 12;
    std::vector<StepResult> steps;
    for (unsigned i = 0; i < n; ++i)
      steps.push_back(randomStep(rng, kReps));
    // Effects of every suffix, built back to front as local search does.
    std::vector<TallyEffect> suffix(n + 1, TallyEffect(kReps));
    for (unsigned p = n; p-- > 0;) {
      suffix[p] = suffix[p + 1];
      suffix[p].prepend(steps[p]);
    }
    for (unsigned p = 0; p <= n; ++p) {
      MemoryTally entry = randomTally(rng, kReps);
      MemoryTally want = entry;
      for (unsigned q = p; q < n; ++q)
        want.add(steps[q]);
      MemoryTally got = suffix[p].applyTo(entry);
      for (unsigned i = 0; i < kReps; ++i) {
        EXPECT_EQ(got.committed[i], want.committed[i]) << trial << " " << p;
        EXPECT_EQ(got.transient[i], want.transient[i]) << trial << " " << p;
        EXPECT_EQ(got.run[i], want.run[i]) << trial << " " << p;
      }
    }
  }
}

TEST(MemoryTallyTest, ClosingStepFoldsTheCarriedRunIntoTheTransient) {
  // A recomputed step (run 50) then a kept step closing the run: an entry
  // run of 30 ends as a transient of 80, not 50.
  StepResult rec, close;
  rec.recompute = true;
  rec.committed = {0};
  rec.transient = {10};
  rec.run = {50};
  close.committed = {5};
  close.transient = {20};
  close.run = {0};
  TallyEffect e(1);
  e.prepend(close);
  e.prepend(rec);
  MemoryTally m(1);
  m.run[0] = 30;
  MemoryTally out = e.applyTo(m);
  EXPECT_EQ(out.committed[0], 5);
  EXPECT_EQ(out.transient[0], 80);
  EXPECT_EQ(out.run[0], 0);
}

} // namespace
