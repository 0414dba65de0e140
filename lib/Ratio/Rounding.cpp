//===- Rounding.cpp - Alignment units, largest remainder, plan shares -----===//

#include "weft/Ratio/Integerize.h"
#include "weft/Ratio/Objective.h"
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace weft;
using namespace weft::ratio;

int64_t weft::ratio::alignmentUnit(const Segment &segment,
                                   const IntegerizeOptions &options) {
  int64_t unit =
      std::lcm(segment.alignment, std::max<int64_t>(options.align, 1));
  return segment.extent % unit == 0 ? unit : segment.alignment;
}

IntegerPlan
weft::ratio::roundLargestRemainder(const RatioProblem &problem,
                                   const Ratios &ratios,
                                   const IntegerizeOptions &options) {
  IntegerPlan plan;
  unsigned numClasses = problem.classes.size();
  for (unsigned s = 0; s < problem.segments.size(); ++s) {
    const Segment &seg = problem.segments[s];
    int64_t unit = alignmentUnit(seg, options);
    int64_t units = seg.extent / unit;
    // Each device's target in units, floored; the deficit goes one unit at a
    // time to the devices with the largest remainders (class order on ties).
    std::vector<int64_t> base(numClasses);
    std::vector<double> remainder(numClasses);
    int64_t assigned = 0;
    for (unsigned c = 0; c < numClasses; ++c) {
      double target = std::max(0.0, ratios[s][c]) * units;
      base[c] = std::min<int64_t>(units, std::floor(target));
      remainder[c] = target - base[c];
      assigned += base[c] * problem.classes[c].count;
    }
    // Rounding noise can overshoot: take units back from the largest shares.
    while (assigned > units) {
      unsigned c = std::max_element(base.begin(), base.end()) - base.begin();
      --base[c];
      remainder[c] += 1;
      assigned -= problem.classes[c].count;
    }
    std::vector<unsigned> order(numClasses);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return remainder[a] > remainder[b];
    });
    std::vector<int64_t> extra(numClasses, 0);
    int64_t deficit = units - assigned;
    while (deficit > 0) {
      bool progress = false;
      for (unsigned c : order) {
        int64_t give =
            std::min<int64_t>(deficit, problem.classes[c].count - extra[c]);
        extra[c] += give;
        deficit -= give;
        progress |= give > 0;
        if (deficit == 0)
          break;
      }
      if (!progress)
        break;
      // Every device got one more unit: fold it into the base.
      for (unsigned c = 0; c < numClasses; ++c)
        if (extra[c] == int64_t(problem.classes[c].count)) {
          ++base[c];
          extra[c] = 0;
        }
    }
    plan.units.push_back(unit);
    plan.sizes.emplace_back();
    for (unsigned c = 0; c < numClasses; ++c) {
      std::vector<int64_t> devices;
      for (unsigned i = 0; i < problem.classes[c].count; ++i)
        devices.push_back((base[c] + (int64_t(i) < extra[c])) * unit);
      plan.sizes.back().push_back(std::move(devices));
    }
  }
  return plan;
}

std::pair<Ratios, Ratios> weft::ratio::planShares(const RatioProblem &problem,
                                                  const IntegerPlan &plan) {
  Ratios high(problem.segments.size()), low(problem.segments.size());
  for (unsigned s = 0; s < problem.segments.size(); ++s) {
    double extent = problem.segments[s].extent;
    for (unsigned c = 0; c < problem.classes.size(); ++c) {
      const std::vector<int64_t> &sizes = plan.sizes[s][c];
      high[s].push_back(*std::max_element(sizes.begin(), sizes.end()) / extent);
      low[s].push_back(*std::min_element(sizes.begin(), sizes.end()) / extent);
    }
  }
  return {high, low};
}
