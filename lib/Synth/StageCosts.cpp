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
  prefixForward.assign(types, std::vector<double>(n + 1, 0));
  prefixKept.assign(n + 1, 0);
  prefixState.assign(n + 1, 0);
  double perParameter = parameterBytesPerElement(eval.dtype) +
                        gradientBytesPerElement(eval.dtype) +
                        optimizerBytesPerElement(eval.optimizer, eval.dtype);
  llvm::DenseSet<mlir::Operation *> seen;
  for (auto [p, op] : llvm::enumerate(program.ops())) {
    double kept = 0;
    std::vector<double> seconds(types, 0), forward(types, 0);
    if (auto cost = llvm::dyn_cast<g::CostOpInterface>(op)) {
      OpCostTerms terms = costTermsOf(cost, g::ShardShapes::of(op), eval.dtype);
      kept = terms.keptBytes;
      for (unsigned t = 0; t < types; ++t) {
        const DeviceType &type = spec.deviceTypes[t];
        forward[t] =
            opTime(type, eval.dtype, terms.forward, eval.profile).seconds;
        seconds[t] =
            forward[t] +
            opTime(type, eval.dtype, terms.backward, eval.profile).seconds;
      }
    }
    double state = 0;
    for (mlir::Operation *param : program.parametersOf(p))
      if (seen.insert(param).second)
        state += elementsOf(param->getResult(0)) * perParameter;
    for (unsigned t = 0; t < types; ++t) {
      prefixSeconds[t][p + 1] = prefixSeconds[t][p] + seconds[t];
      prefixForward[t][p + 1] = prefixForward[t][p] + forward[t];
    }
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

  // Recomputation: checkpoints at the cut points, one block live at once.
  prefixCheckpoints.assign(n + 1, 0);
  std::vector<bool> isCut(n + 1, false);
  for (unsigned c : cuts)
    isCut[c] = true;
  for (unsigned p = 0; p < n; ++p)
    prefixCheckpoints[p + 1] =
        prefixCheckpoints[p] + (isCut[p] ? program.crossingBytes(p) : 0);
  std::vector<unsigned> blockStarts{0};
  llvm::append_range(blockStarts, cuts);
  blockStarts.push_back(n);
  unsigned width = boundaries.size();
  largestBlock.assign(width * width, 0);
  for (unsigned a = 0; a < width; ++a)
    for (unsigned b = a + 1; b < width; ++b) {
      double most = 0;
      for (unsigned k = 0; k + 1 < blockStarts.size(); ++k) {
        unsigned from = std::max(blockStarts[k], boundaries[a]);
        unsigned to = std::min(blockStarts[k + 1], boundaries[b]);
        if (from < to)
          most = std::max(most, prefixKept[to] - prefixKept[from]);
      }
      largestBlock[a * width + b] = most;
    }

  unsigned per = (spec.numNodes() + maxNodeGroups - 1) / maxNodeGroups;
  for (unsigned i = 0; i < spec.numNodes(); i += per)
    nodeBounds.push_back(i);
  nodeBounds.push_back(spec.numNodes());
  prefixDevices.assign(types, std::vector<unsigned>(spec.numNodes() + 1, 0));
  prefixCapacity.assign(spec.numNodes() + 1, 0);
  for (const DeviceType &type : spec.deviceTypes)
    usable.push_back(type.memoryBytes() * (1 - eval.reservedMemoryFraction));
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
  return secondsOf(a, b, u, v, 1);
}

unsigned ProgramStageCosts::devicesOf(unsigned u, unsigned v) const {
  unsigned devices = 0;
  for (const auto &prefix : prefixDevices)
    devices += prefix[nodeBounds[v]] - prefix[nodeBounds[u]];
  return devices;
}

bool ProgramStageCosts::mixed(unsigned u, unsigned v) const {
  unsigned types = 0;
  for (const auto &prefix : prefixDevices)
    types += prefix[nodeBounds[v]] > prefix[nodeBounds[u]];
  return types > 1;
}

double ProgramStageCosts::recomputedSeconds(unsigned a, unsigned b, unsigned u,
                                            unsigned v,
                                            int64_t inFlight) const {
  if (!fitsDevices(a, b, u, v, inFlight, /*recompute=*/true))
    return std::numeric_limits<double>::infinity();
  return secondsOf(a, b, u, v, 2);
}

double ProgramStageCosts::secondsOf(unsigned a, unsigned b, unsigned u,
                                    unsigned v, double forwards) const {
  if ((oneTypePerStage && mixed(u, v)) ||
      (samples > 0 && samplesPerDevice * devicesOf(u, v) > samples))
    return std::numeric_limits<double>::infinity();
  unsigned from = boundaries[a], to = boundaries[b];
  u = nodeBounds[u];
  v = nodeBounds[v];
  double rate = 0;
  for (unsigned t = 0; t < prefixSeconds.size(); ++t) {
    unsigned devices = prefixDevices[t][v] - prefixDevices[t][u];
    double seconds =
        prefixSeconds[t][to] - prefixSeconds[t][from] +
        (forwards - 1) * (prefixForward[t][to] - prefixForward[t][from]);
    if (devices == 0)
      continue;
    if (seconds <= 0)
      return 0;
    rate += double(devices) / seconds;
  }
  return rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
}

double ProgramStageCosts::neededBytes(unsigned a, unsigned b, int64_t inFlight,
                                      bool recompute) const {
  unsigned from = boundaries[a], to = boundaries[b];
  double activations =
      recompute ? (prefixCheckpoints[to] - prefixCheckpoints[from]) *
                          double(inFlight) +
                      largestBlock[a * boundaries.size() + b]
                : (prefixKept[to] - prefixKept[from]) * double(inFlight);
  return prefixState[to] - prefixState[from] + activations * activationShare;
}

double ProgramStageCosts::capacityBytes(unsigned u, unsigned v) const {
  return prefixCapacity[nodeBounds[v]] - prefixCapacity[nodeBounds[u]];
}

bool ProgramStageCosts::fits(unsigned a, unsigned b, unsigned u, unsigned v,
                             int64_t inFlight) const {
  return fitsDevices(a, b, u, v, inFlight, /*recompute=*/false);
}

std::vector<double> ProgramStageCosts::speedShares(unsigned a, unsigned b,
                                                   unsigned u,
                                                   unsigned v) const {
  unsigned from = boundaries[a], to = boundaries[b];
  u = nodeBounds[u];
  v = nodeBounds[v];
  unsigned types = prefixSeconds.size();
  double rate = 0, devices = 0;
  for (unsigned t = 0; t < types; ++t) {
    unsigned k = prefixDevices[t][v] - prefixDevices[t][u];
    double seconds = prefixSeconds[t][to] - prefixSeconds[t][from];
    devices += k;
    if (k && seconds > 0)
      rate += double(k) / seconds;
  }
  std::vector<double> shares(types, 0);
  for (unsigned t = 0; t < types; ++t) {
    unsigned k = prefixDevices[t][v] - prefixDevices[t][u];
    double seconds = prefixSeconds[t][to] - prefixSeconds[t][from];
    if (k)
      shares[t] = seconds > 0 && rate > 0 ? 1 / (seconds * rate) : 1 / devices;
  }
  return shares;
}

double ProgramStageCosts::stateShare(unsigned a, unsigned b, unsigned u,
                                     unsigned v) const {
  unsigned devices = devicesOf(u, v);
  return devices ? (prefixState[boundaries[b]] - prefixState[boundaries[a]]) /
                       double(devices)
                 : 0;
}

bool ProgramStageCosts::fitsDevices(unsigned a, unsigned b, unsigned u,
                                    unsigned v, int64_t inFlight,
                                    bool recompute) const {
  // Parameters and their state sharded over every device (ZeRO-3);
  // activations in proportion to speed, as the plan's ratios give them.
  unsigned from = boundaries[a], to = boundaries[b];
  double state = prefixState[to] - prefixState[from];
  double activations = neededBytes(a, b, inFlight, recompute) - state;
  double devices = devicesOf(u, v);
  if (devices == 0)
    return false;
  std::vector<double> shares = speedShares(a, b, u, v);
  for (unsigned t = 0; t < shares.size(); ++t)
    if (shares[t] > 0 &&
        state / devices + activations * shares[t] > memoryHeadroom * usable[t])
      return false;
  return true;
}
