//===- Components.cpp - Split a problem into independent parts ------------===//

#include "Components.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include <map>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Calls `f(segment)` for every segment a step's costs mention.
template <typename F> void forEachSegment(const Step &step, F f) {
  auto linear = [&](const LinearCost &cost) {
    for (const RatioTerm &t : cost.terms)
      f(t.segment);
  };
  for (const StepClassCost &cost : step.perClass) {
    linear(cost.compute);
    linear(cost.comm);
    for (const auto *list : {&cost.computeMax, &cost.commMax})
      for (const MaxCost &m : *list)
        for (const LinearCost &piece : m.pieces)
          linear(piece);
    for (const NicLoad &load : cost.nicLoads)
      f(load.segment);
  }
}

/// Rewrites segment indices through `index`.
struct Reindexer {
  const std::map<unsigned, unsigned> &index;
  void linear(LinearCost &cost) const {
    for (RatioTerm &t : cost.terms)
      t.segment = index.at(t.segment);
  }
  void step(Step &step) const {
    for (StepClassCost &cost : step.perClass) {
      linear(cost.compute);
      linear(cost.comm);
      for (auto *list : {&cost.computeMax, &cost.commMax})
        for (MaxCost &m : *list)
          for (LinearCost &piece : m.pieces)
            linear(piece);
      for (NicLoad &load : cost.nicLoads)
        load.segment = index.at(load.segment);
    }
  }
};
} // namespace

std::vector<Component>
weft::ratio::splitIndependent(const RatioProblem &problem) {
  llvm::EquivalenceClasses<unsigned> linked;
  std::vector<bool> touched(problem.segments.size(), false);
  auto link = [&](std::optional<unsigned> &first, unsigned segment) {
    touched[segment] = true;
    linked.insert(segment);
    if (first)
      linked.unionSets(*first, segment);
    else
      first = segment;
  };
  std::vector<std::optional<unsigned>> stepFirst(problem.steps.size());
  for (unsigned k = 0; k < problem.steps.size(); ++k)
    forEachSegment(problem.steps[k],
                   [&](unsigned s) { link(stepFirst[k], s); });
  std::vector<std::optional<unsigned>> memoryFirst(problem.memory.size());
  for (unsigned c = 0; c < problem.memory.size(); ++c)
    for (const RatioTerm &t : problem.memory[c].terms)
      link(memoryFirst[c], t.segment);

  // Components in order of their smallest segment.
  std::map<unsigned, unsigned> componentOfLeader;
  std::vector<Component> components;
  std::vector<unsigned> componentOf(problem.segments.size(), ~0u);
  for (unsigned s = 0; s < problem.segments.size(); ++s) {
    if (!touched[s])
      continue;
    unsigned leader = linked.getLeaderValue(s);
    auto [it, inserted] =
        componentOfLeader.try_emplace(leader, components.size());
    if (inserted) {
      components.emplace_back();
      components.back().problem.classes = problem.classes;
      components.back().problem.nodes = problem.nodes;
    }
    componentOf[s] = it->second;
    components[it->second].segments.push_back(s);
    components[it->second].problem.segments.push_back(problem.segments[s]);
  }
  std::vector<std::map<unsigned, unsigned>> index(components.size());
  for (unsigned i = 0; i < components.size(); ++i)
    for (unsigned j = 0; j < components[i].segments.size(); ++j)
      index[i][components[i].segments[j]] = j;

  for (unsigned k = 0; k < problem.steps.size(); ++k) {
    if (!stepFirst[k])
      continue;
    unsigned i = componentOf[*stepFirst[k]];
    Step step = problem.steps[k];
    Reindexer{index[i]}.step(step);
    components[i].problem.steps.push_back(std::move(step));
  }
  // Memory rows go to the component they mention; other components get a
  // free row (constant 0) so every class still has one.
  for (unsigned c = 0; c < problem.memory.size(); ++c) {
    for (Component &comp : components)
      comp.problem.memory.resize(problem.classes.size());
    if (!memoryFirst[c])
      continue;
    unsigned i = componentOf[*memoryFirst[c]];
    LinearCost row = problem.memory[c];
    Reindexer{index[i]}.linear(row);
    components[i].problem.memory[c] = std::move(row);
  }
  return components;
}
