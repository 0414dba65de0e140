//===- Objective.cpp - The step-cost objective at given ratios ------------===//

#include "weft/Ratio/Objective.h"
#include <algorithm>
#include <limits>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Reads ratios conservatively: high shares for growing terms, low ones for
/// shrinking terms.
struct RatioReader {
  const Ratios &high;
  const Ratios &low;

  double term(const RatioTerm &t) const {
    const Ratios &r = t.coef >= 0 ? high : low;
    return t.coef * r[t.segment][t.deviceClass];
  }
  double linear(const LinearCost &cost) const {
    double value = cost.constant;
    for (const RatioTerm &t : cost.terms)
      value += term(t);
    return value;
  }
  double max(const MaxCost &cost) const {
    double best = -std::numeric_limits<double>::infinity();
    for (const LinearCost &piece : cost.pieces)
      best = std::max(best, linear(piece));
    return cost.scale * best;
  }
  /// Seconds node `n` spends receiving `nic` over its NIC.
  double nic(const RatioProblem &p, const NicLoad &nic, unsigned n) const {
    const Node &node = p.nodes[n];
    double held = 0;
    for (const auto &[cls, devices] : node.devices)
      held += devices * low[nic.segment][cls];
    return (1 - held) * nic.bytes / node.nicBandwidth;
  }
};
} // namespace

StepTimes weft::ratio::evaluateSteps(const RatioProblem &problem,
                                     const Ratios &high, const Ratios &low) {
  RatioReader read{high, low};
  StepTimes times;
  // Nodes of one shape take equal NIC times: one node of each per class.
  auto shapes = problem.distinctNodesByClass();
  for (const Step &step : problem.steps) {
    double compute = 0, comm = 0;
    for (unsigned c = 0; c < problem.classes.size(); ++c) {
      const StepClassCost &cost = step.perClass[c];
      double cc = read.linear(cost.compute);
      for (const MaxCost &m : cost.computeMax)
        cc += read.max(m);
      double mc = read.linear(cost.comm);
      for (const MaxCost &m : cost.commMax)
        mc += read.max(m);
      double worstNic = 0;
      if (!cost.nicLoads.empty()) {
        worstNic = -std::numeric_limits<double>::infinity();
        for (unsigned n : shapes[c]) {
          double t = 0;
          for (const NicLoad &nic : cost.nicLoads)
            t += read.nic(problem, nic, n);
          worstNic = std::max(worstNic, t);
        }
      }
      compute = c == 0 ? cc : std::max(compute, cc);
      comm = c == 0 ? mc + worstNic : std::max(comm, mc + worstNic);
    }
    times.compute.push_back(compute);
    times.comm.push_back(comm);
    times.total += step.multiplicity * (compute + comm);
  }
  return times;
}

double weft::ratio::evaluateObjective(const RatioProblem &problem,
                                      const Ratios &ratios) {
  return evaluateSteps(problem, ratios, ratios).total;
}

double weft::ratio::evaluateMemory(const RatioProblem &problem, unsigned c,
                                   const Ratios &high, const Ratios &low) {
  if (problem.memory.empty())
    return 0;
  return RatioReader{high, low}.linear(problem.memory[c]);
}
