//===- StarBoundTest.cpp - A value's consumers chosen together ------------===//
//
// starBound (lib/Synth/StarBound.h) must equal the least over every
// combination of one choice per consumer of Σ rest + max(floor, max relay):
// brute force on random stars, ties and impossible choices included.
//
//===----------------------------------------------------------------------===//

#include "StarBound.h"
#include "gtest/gtest.h"
#include <cmath>
#include <limits>
#include <random>

using namespace weft::synth;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

double bruteForce(const std::vector<std::vector<StarChoice>> &consumers,
                  double floor, size_t c = 0, double rest = 0,
                  double relay = 0) {
  if (c == consumers.size())
    return rest + std::max(floor, relay);
  double best = kInf;
  for (const StarChoice &x : consumers[c])
    best = std::min(best, bruteForce(consumers, floor, c + 1, rest + x.rest,
                                     std::max(relay, x.relay)));
  return best;
}

TEST(StarBoundTest, EqualsEveryCombination) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> count(0, 4), options(1, 5), value(0, 9),
      rare(0, 19);
  unsigned finite = 0;
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::vector<StarChoice>> consumers(count(rng));
    for (auto &choices : consumers)
      for (int o = options(rng); o > 0; --o) {
        // Small integers make ties; an impossible relayout now and then.
        StarChoice x{double(value(rng)), double(value(rng))};
        if (rare(rng) == 0)
          x.relay = kInf;
        choices.push_back(x);
      }
    double floor = double(value(rng)) / 2;
    double want = bruteForce(consumers, floor);
    double got = starBound(consumers, floor);
    if (std::isinf(want)) {
      EXPECT_TRUE(std::isinf(got)) << "case " << t;
      continue;
    }
    ++finite;
    EXPECT_DOUBLE_EQ(got, want) << "case " << t;
  }
  EXPECT_GT(finite, 1500u);
}

TEST(StarBoundTest, SharedRelayoutIsPaidOnce) {
  // Three consumers whose cheap option needs the same relayout (5 s) pay
  // it once: 3 × 1 + 5 = 8, below 3 × 4 with no relayout.
  std::vector<std::vector<StarChoice>> consumers(3, {{0, 4}, {5, 1}});
  EXPECT_DOUBLE_EQ(starBound(consumers, 0), 8);
  // A dearer other use (floor 6) is paid whatever they choose.
  EXPECT_DOUBLE_EQ(starBound(consumers, 6), 9);
}
} // namespace
