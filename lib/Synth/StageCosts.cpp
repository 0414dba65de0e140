//===- StageCosts.cpp - Estimated stage times of a graph program ----------===//

#include "StageCosts.h"
#include "Graph/IR/GraphInterfaces.h"
#include "Graph/IR/GraphOps.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Cost/Memory.h"
#include "weft/Cost/OpCost.h"
#include "weft/Cost/ProfileDB.h"
#include "llvm/ADT/DenseSet.h"
#include <algorithm>
#include <limits>

using namespace weft;
using namespace weft::synth;
namespace g = weft::graph;

/// Elements of a tensor value.
static double elementsOf(mlir::Value v) {
  auto type = v.getType().dyn_cast<mlir::RankedTensorType>();
  return type ? double(type.getNumElements()) : 0;
}

ProgramStageCosts::ProgramStageCosts(const StageProgram &program,
                                     const ClusterSpec &spec,
                                     const EvalOptions &eval, unsigned maxCuts,
                                     unsigned maxNodeGroups)
    : spec(spec) {
  unsigned n = program.size();
  unsigned types = spec.deviceTypes.size();
  prefixSeconds.assign(types, std::vector<double>(n + 1, 0));
  prefixKept.assign(n + 1, 0);
  prefixState.assign(n + 1, 0);
  double perParameter = parameterBytesPerElement(eval.dtype) +
                        gradientBytesPerElement(eval.dtype) +
                        optimizerBytesPerElement(eval.optimizer, eval.dtype);
  llvm::DenseSet<mlir::Operation *> seen;
  for (auto [p, op] : llvm::enumerate(program.ops())) {
    double kept = 0;
    std::vector<double> seconds(types, 0);
    if (auto cost = llvm::dyn_cast<g::CostOpInterface>(op)) {
      OpCostTerms terms = costTermsOf(cost, g::ShardShapes::of(op), eval.dtype);
      kept = terms.keptBytes;
      for (unsigned t = 0; t < types; ++t)
        seconds[t] =
            opTime(spec.deviceTypes[t], eval.dtype, terms.forward, eval.profile)
                .seconds +
            opTime(spec.deviceTypes[t], eval.dtype, terms.backward,
                   eval.profile)
                .seconds;
    }
    double state = 0;
    for (mlir::Operation *param : program.parametersOf(p))
      if (seen.insert(param).second)
        state += elementsOf(param->getResult(0)) * perParameter;
    for (unsigned t = 0; t < types; ++t)
      prefixSeconds[t][p + 1] = prefixSeconds[t][p] + seconds[t];
    prefixKept[p + 1] = prefixKept[p] + kept;
    prefixState[p + 1] = prefixState[p] + state;
  }

  // Boundaries: the cut points, at most maxCuts − 1 of them, spread evenly
  // by the compute before them.
  std::vector<unsigned> cuts = program.cutPoints();
  boundaries.push_back(0);
  if (cuts.size() + 1 <= maxCuts || maxCuts < 2) {
    llvm::append_range(boundaries, cuts);
  } else {
    const std::vector<double> &work = prefixSeconds.front();
    size_t next = 0;
    for (unsigned k = 1; k < maxCuts; ++k) {
      double target = work[n] * double(k) / double(maxCuts);
      while (next + 1 < cuts.size() && work[cuts[next]] < target)
        ++next;
      if (boundaries.back() < cuts[next])
        boundaries.push_back(cuts[next]);
    }
  }
  boundaries.push_back(n);

  unsigned per = (spec.numNodes() + maxNodeGroups - 1) / maxNodeGroups;
  for (unsigned i = 0; i < spec.numNodes(); i += per)
    nodeBounds.push_back(i);
  nodeBounds.push_back(spec.numNodes());
  prefixDevices.assign(types, std::vector<unsigned>(spec.numNodes() + 1, 0));
  prefixCapacity.assign(spec.numNodes() + 1, 0);
  double slowestNic = std::numeric_limits<double>::infinity();
  double latency = 0;
  for (auto [i, node] : llvm::enumerate(spec.nodes)) {
    for (unsigned t = 0; t < types; ++t)
      prefixDevices[t][i + 1] =
          prefixDevices[t][i] + (node.typeIndex == t ? node.numDevices : 0);
    prefixCapacity[i + 1] =
        prefixCapacity[i] + double(node.numDevices) *
                                spec.deviceTypes[node.typeIndex].memoryBytes() *
                                (1 - eval.reservedMemoryFraction);
    if (node.nicBandwidth() > 0)
      slowestNic = std::min(slowestNic, node.nicBandwidth());
    latency = std::max(latency, node.nicLatency());
  }
  for (unsigned i = 0; i < boundaries.size(); ++i) {
    bool inside = i > 0 && i + 1 < boundaries.size();
    double bytes = inside ? program.crossingBytes(boundaries[i]) : 0;
    links.push_back(inside && slowestNic < std::numeric_limits<double>::max()
                        ? 2 * (bytes / slowestNic + latency)
                        : 0);
  }
}

double ProgramStageCosts::stageSeconds(unsigned a, unsigned b, unsigned u,
                                       unsigned v) const {
  unsigned from = boundaries[a], to = boundaries[b];
  u = nodeBounds[u];
  v = nodeBounds[v];
  double rate = 0;
  for (unsigned t = 0; t < prefixSeconds.size(); ++t) {
    unsigned devices = prefixDevices[t][v] - prefixDevices[t][u];
    double seconds = prefixSeconds[t][to] - prefixSeconds[t][from];
    if (devices == 0)
      continue;
    if (seconds <= 0)
      return 0;
    rate += double(devices) / seconds;
  }
  return rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
}

double ProgramStageCosts::neededBytes(unsigned a, unsigned b,
                                      int64_t inFlight) const {
  unsigned from = boundaries[a], to = boundaries[b];
  return prefixState[to] - prefixState[from] +
         (prefixKept[to] - prefixKept[from]) * double(inFlight) *
             activationShare;
}

double ProgramStageCosts::capacityBytes(unsigned u, unsigned v) const {
  return prefixCapacity[nodeBounds[v]] - prefixCapacity[nodeBounds[u]];
}

bool ProgramStageCosts::fits(unsigned a, unsigned b, unsigned u, unsigned v,
                             int64_t inFlight) const {
  return neededBytes(a, b, inFlight) <= capacityBytes(u, v);
}
