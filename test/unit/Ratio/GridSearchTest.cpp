//===- GridSearchTest.cpp - The LP optimum against a fine grid search -----===//
//
// Random problems (fixed seed) on 2–3 device classes: the LP optimum must be
// no worse than every feasible grid point (the LP is exact) and no better
// than the best grid point by more than the objective's Lipschitz constant
// times the grid step (the grid is within one step of the LP optimum). Grid
// points are scored by evaluateObjective, which shares no code with the LP
// builder.
//
//===----------------------------------------------------------------------===//

#include "TestProblems.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/SolveRatios.h"
#include <cmath>
#include <functional>
#include <random>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

/// Shape of a random problem.
struct Shape {
  std::vector<unsigned> counts;
  unsigned segments;
  bool nodes;
  bool memory;
};

class RandomProblems {
public:
  explicit RandomProblems(unsigned seed) : rng(seed) {}

  RatioProblem make(const Shape &shape) {
    RatioProblem p;
    unsigned k = shape.counts.size();
    for (unsigned c = 0; c < k; ++c)
      p.classes.push_back({"c" + std::to_string(c), shape.counts[c]});
    for (unsigned s = 0; s < shape.segments; ++s)
      p.segments.push_back({"s" + std::to_string(s), 1024, 1, std::nullopt});
    if (shape.nodes)
      for (unsigned c = 0; c < k; ++c)
        p.nodes.push_back(
            {"n" + std::to_string(c), {{c, shape.counts[c]}}, uniform(0.5, 2)});
    std::vector<double> slowness;
    for (unsigned c = 0; c < k; ++c)
      slowness.push_back(uniform(0.5, 3));
    unsigned numSteps = 2 + rng() % 4;
    for (unsigned i = 0; i < numSteps; ++i)
      addRandomStep(p, slowness, shape.nodes);
    if (shape.memory)
      addMemory(p);
    return p;
  }

private:
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  bool coin(double probability) { return uniform(0, 1) < probability; }

  void addRandomStep(RatioProblem &p, const std::vector<double> &slowness,
                     bool nodes) {
    Step &step = addStep(p, double(1 + rng() % 3));
    unsigned numSegments = p.segments.size();
    bool gather = coin(0.5), roofline = coin(0.5), nic = nodes && coin(0.7);
    unsigned gatherSegment = rng() % numSegments;
    double gatherBytes = uniform(0.1, 1);
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      StepClassCost &cost = step.perClass[c];
      double count = p.classes[c].count;
      cost.compute.constant = coin(0.5) ? uniform(0, 0.3) : 0;
      for (unsigned s = 0; s < numSegments; ++s)
        if (coin(0.7))
          cost.compute.terms.push_back(
              {s, c, uniform(0.2, 2) * slowness[c] * count});
      if (roofline) {
        MaxCost m;
        m.pieces.push_back(linear(0, 0, c, uniform(0.5, 3) * count));
        m.pieces.push_back(linear(uniform(0, 0.5), 0, c, 0));
        cost.computeMax.push_back(m);
      }
      // Communication may shrink with the own share and grow with others'.
      cost.comm.constant = uniform(0, 0.2);
      for (unsigned j = 0; j < p.classes.size(); ++j)
        if (coin(0.4))
          cost.comm.terms.push_back(
              {unsigned(rng() % numSegments), j,
               uniform(j == c ? -0.5 : 0, 1) * p.classes[j].count});
      if (gather)
        cost.commMax.push_back(paddedAllGather(p, gatherSegment, gatherBytes,
                                               uniform(1, 2) * p.numDevices()));
      if (nic)
        cost.nicLoads.push_back({0, gatherBytes});
    }
  }

  /// Memory rows that bind on some problems but leave the equal split
  /// (share 1/k per class) at least 20% below capacity.
  void addMemory(RatioProblem &p) {
    unsigned k = p.classes.size();
    for (unsigned c = 0; c < k; ++c) {
      double count = p.classes[c].count;
      LinearCost mem;
      mem.constant = uniform(0, 1);
      double perShare = uniform(1, 4);
      for (unsigned s = 0; s < p.segments.size(); ++s)
        mem.terms.push_back({s, c, perShare * count});
      double atEqualSplit =
          mem.constant + perShare * p.segments.size() / double(k);
      p.classes[c].memoryCapacity = atEqualSplit * uniform(1.2, 1.6);
      p.memory.push_back(mem);
    }
  }

  std::mt19937 rng;
};

/// Σ of |∂objective/∂f| over every share f_{s,c} = count_c·B_{s,c}: each
/// term contributes |coef|/count_c (max terms: their scale times the pieces'
/// coefficients; NIC loads: bytes/bandwidth·devices/count).
double lipschitzBound(const RatioProblem &p) {
  auto linearBound = [&](const LinearCost &cost, double scale) {
    double sum = 0;
    for (const RatioTerm &t : cost.terms)
      sum += scale * std::abs(t.coef) / p.classes[t.deviceClass].count;
    return sum;
  };
  double total = 0;
  for (const Step &step : p.steps) {
    double perStep = 0;
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      const StepClassCost &cost = step.perClass[c];
      perStep += linearBound(cost.compute, 1) + linearBound(cost.comm, 1);
      for (const auto *list : {&cost.computeMax, &cost.commMax})
        for (const MaxCost &m : *list)
          for (const LinearCost &piece : m.pieces)
            perStep += linearBound(piece, m.scale);
      for (const NicLoad &load : cost.nicLoads)
        for (const Node &node : p.nodes)
          for (const auto &[cls, devices] : node.devices)
            perStep +=
                load.bytes / node.nicBandwidth * devices / p.classes[cls].count;
    }
    total += step.multiplicity * perStep;
  }
  return total;
}

bool fitsMemory(const RatioProblem &p, const Ratios &ratios) {
  for (unsigned c = 0; c < p.memory.size(); ++c)
    if (evaluateMemory(p, c, ratios, ratios) > p.classes[c].memoryCapacity)
      return false;
  return true;
}

/// Minimum of the objective over the grid of shares with step h: every
/// segment's shares f_c ∈ {0, h, ..., 1} summing to one.
double gridMinimum(const RatioProblem &p, double h) {
  unsigned k = p.classes.size(), numSegments = p.segments.size();
  int n = int(std::lround(1 / h));
  // Per segment, all compositions of n into k parts.
  std::vector<std::vector<int>> compositions;
  std::vector<int> current(k, 0);
  std::function<void(unsigned, int)> enumerate = [&](unsigned c, int left) {
    if (c + 1 == k) {
      current[c] = left;
      compositions.push_back(current);
      return;
    }
    for (int i = 0; i <= left; ++i) {
      current[c] = i;
      enumerate(c + 1, left - i);
    }
  };
  enumerate(0, n);

  Ratios ratios(numSegments, std::vector<double>(k));
  double best = INFINITY;
  std::vector<size_t> index(numSegments, 0);
  while (true) {
    for (unsigned s = 0; s < numSegments; ++s)
      for (unsigned c = 0; c < k; ++c)
        ratios[s][c] =
            compositions[index[s]][c] * h / double(p.classes[c].count);
    if (fitsMemory(p, ratios))
      best = std::min(best, evaluateObjective(p, ratios));
    unsigned s = 0;
    while (s < numSegments && ++index[s] == compositions.size())
      index[s++] = 0;
    if (s == numSegments)
      break;
  }
  return best;
}

void compareWithGrid(const Shape &shape, double h, unsigned seed,
                     unsigned trials) {
  RandomProblems gen(seed);
  for (unsigned t = 0; t < trials; ++t) {
    RatioProblem p = gen.make(shape);
    auto sol = solveRatios(p);
    ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
    // The LP's reported objective is the true objective at its ratios.
    double atRatios = evaluateObjective(p, sol->ratios);
    EXPECT_NEAR(sol->objectiveSeconds, atRatios, 1e-7 * (1 + atRatios));
    for (unsigned c = 0; c < p.memory.size(); ++c)
      EXPECT_LE(evaluateMemory(p, c, sol->ratios, sol->ratios),
                p.classes[c].memoryCapacity * (1 + 1e-7));
    double grid = gridMinimum(p, h);
    ASSERT_TRUE(std::isfinite(grid)) << "no feasible grid point, trial " << t;
    double tol = lipschitzBound(p) * shape.counts.size() * h;
    EXPECT_LE(sol->objectiveSeconds, grid + 1e-9) << "trial " << t;
    EXPECT_GE(sol->objectiveSeconds, grid - tol) << "trial " << t;
  }
}

TEST(GridSearch, TwoClassesOneSegment) {
  compareWithGrid({{1, 1}, 1, false, false}, 1e-3, 11, 20);
  compareWithGrid({{2, 3}, 1, true, false}, 1e-3, 12, 20);
}

TEST(GridSearch, TwoClassesWithMemory) {
  compareWithGrid({{4, 2}, 1, true, true}, 1e-3, 13, 20);
}

TEST(GridSearch, ThreeClassesOneSegment) {
  compareWithGrid({{1, 2, 4}, 1, true, true}, 1e-3, 14, 6);
}

TEST(GridSearch, TwoClassesTwoSegments) {
  compareWithGrid({{2, 2}, 2, false, true}, 1e-3, 15, 6);
}

} // namespace
