//===- StarBound.cpp - Least cost of a value's consumers together ---------===//
//
// The least is reached at a threshold T on the largest relayout: each
// consumer then takes its cheapest choice relaying at most T. Sweeping the
// choices by relayout keeps each consumer's cheapest so far and their sum;
// every relayout seen is a candidate T (below `floor` the max is `floor`).
//
//===----------------------------------------------------------------------===//

#include "StarBound.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace weft::synth;

double weft::synth::starBound(llvm::ArrayRef<std::vector<StarChoice>> consumers,
                              double floor) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (consumers.empty())
    return floor;
  struct Item {
    double relay, rest;
    unsigned consumer;
  };
  std::vector<Item> items;
  for (auto [c, choices] : llvm::enumerate(consumers))
    for (const StarChoice &x : choices)
      if (std::isfinite(x.relay) && std::isfinite(x.rest))
        items.push_back({x.relay, x.rest, unsigned(c)});
  std::sort(items.begin(), items.end(),
            [](const Item &a, const Item &b) { return a.relay < b.relay; });
  std::vector<double> cheapest(consumers.size(), kInf);
  size_t open = consumers.size();
  double best = kInf;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item &it = items[i];
    double &c = cheapest[it.consumer];
    open -= std::isinf(c);
    c = std::min(c, it.rest);
    // Evaluate once every choice at this relayout is in (the sum afresh:
    // a running sum could drift above the least by rounding).
    if (open == 0 &&
        (i + 1 == items.size() || items[i + 1].relay != it.relay)) {
      double sum = 0;
      for (double x : cheapest)
        sum += x;
      best = std::min(best, std::max(floor, it.relay) + sum);
    }
  }
  return best;
}
