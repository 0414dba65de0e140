//===- Network.cpp - Links, paths and max-min sharing --------------------===//
//
// Links: each node's NIC (transmit and receive), and with a leaf/spine
// topology each (leaf, spine) uplink and downlink at uplink / #spines. A
// spread job does a hierarchical all-reduce: one flow per node around a ring
// of its nodes, each carrying the job's per-iteration bytes. Fluid model: a
// flow asks for its average rate when uncontended (bytes / iteration time);
// link bandwidth is shared max-min among the flows of one priority level,
// strictly after the levels above, never above a flow's demand.
//
//===----------------------------------------------------------------------===//

#include "NetworkImpl.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::sched;

NetworkModel::~NetworkModel() = default;

LinkGraph::LinkGraph(const SchedCluster &cluster) : cluster(cluster) {
  unsigned numNodes = cluster.nodes.size();
  for (unsigned n = 0; n < numNodes; ++n) {
    double bytesPerS = cluster.nodes[n].nicGbps * 1e9 / 8;
    capacity.push_back(bytesPerS); // tx
    capacity.push_back(bytesPerS); // rx
  }
  spines = cluster.leaves.empty() ? 0 : cluster.numSpines;
  for (const SchedLeaf &leaf : cluster.leaves)
    for (unsigned s = 0; s < spines; ++s) {
      double bytesPerS = leaf.uplinkGbps * 1e9 / 8 / spines;
      if (bytesPerS <= 0)
        bytesPerS = std::numeric_limits<double>::infinity();
      capacity.push_back(bytesPerS); // up
      capacity.push_back(bytesPerS); // down
    }
}

std::vector<unsigned> LinkGraph::path(unsigned src, unsigned dst,
                                      unsigned spine) const {
  std::vector<unsigned> links = {2 * src, 2 * dst + 1};
  int a = cluster.nodes[src].leaf, b = cluster.nodes[dst].leaf;
  if (spines == 0 || a < 0 || b < 0 || a == b)
    return links;
  unsigned base = 2 * cluster.nodes.size();
  links.push_back(base + 2 * (a * spines + spine));
  links.push_back(base + 2 * (b * spines + spine) + 1);
  return links;
}

bool LinkGraph::crossesSpine(unsigned src, unsigned dst) const {
  int a = cluster.nodes[src].leaf, b = cluster.nodes[dst].leaf;
  return spines > 0 && a >= 0 && b >= 0 && a != b;
}

std::vector<double> LinkGraph::share(const std::vector<Flow> &flows) const {
  std::vector<double> rate(flows.size(), 0);
  std::vector<double> left = capacity;
  unsigned maxLevel = 0;
  for (const Flow &flow : flows)
    maxLevel = std::max(maxLevel, flow.level);
  for (unsigned level = 0; level <= maxLevel; ++level) {
    std::vector<unsigned> open;
    for (unsigned f = 0; f < flows.size(); ++f)
      if (flows[f].level == level)
        open.push_back(f);
    // Progressive filling: raise all open flows until a link saturates.
    while (!open.empty()) {
      std::vector<unsigned> users(left.size(), 0);
      for (unsigned f : open)
        for (unsigned link : flows[f].links)
          ++users[link];
      double step = std::numeric_limits<double>::infinity();
      for (unsigned link = 0; link < left.size(); ++link)
        if (users[link])
          step = std::min(step, left[link] / users[link]);
      for (unsigned f : open)
        step = std::min(step, flows[f].demand - rate[f]);
      if (!std::isfinite(step))
        break;
      for (unsigned f : open) {
        rate[f] += step;
        for (unsigned link : flows[f].links)
          left[link] -= step;
      }
      std::vector<unsigned> still;
      for (unsigned f : open) {
        bool saturated = rate[f] >= flows[f].demand * (1 - 1e-12);
        for (unsigned link : flows[f].links)
          saturated |= left[link] <= 1e-9 * capacity[link];
        if (!saturated)
          still.push_back(f);
      }
      open.swap(still);
    }
  }
  return rate;
}

std::vector<Flow> sched::ringFlows(const NetJob &job, unsigned owner) {
  std::vector<Flow> flows;
  unsigned n = job.shares.size();
  for (unsigned i = 0; i < n && n > 1; ++i)
    flows.push_back(
        {owner, job.shares[i].first, job.shares[(i + 1) % n].first, {}, 0});
  return flows;
}

std::vector<double> sched::setDemands(const LinkGraph &graph,
                                      llvm::ArrayRef<NetJob> jobs,
                                      std::vector<Flow> &flows) {
  std::vector<double> alone(jobs.size(), 0);
  for (const Flow &flow : flows) {
    double best = std::numeric_limits<double>::infinity();
    for (unsigned link : flow.links)
      best = std::min(best, graph.capacity[link]);
    alone[flow.job] =
        std::max(alone[flow.job], jobs[flow.job].profile.bytesPerGpu / best);
  }
  for (Flow &flow : flows) {
    const NetJob &job = jobs[flow.job];
    double iteration = job.profile.computeS + alone[flow.job];
    flow.demand = iteration > 0 ? job.profile.bytesPerGpu / iteration : 0;
  }
  return alone;
}

std::vector<double> sched::slowdownsFrom(const LinkGraph &,
                                         llvm::ArrayRef<NetJob> jobs,
                                         const std::vector<Flow> &flows,
                                         const std::vector<double> &rates) {
  std::vector<double> slowdown(jobs.size(), 1.0);
  for (unsigned f = 0; f < flows.size(); ++f) {
    const Flow &flow = flows[f];
    if (flow.demand <= 0)
      continue;
    // A starved flow stalls its job; cap the factor to keep time finite.
    double factor = rates[f] > 0 ? flow.demand / rates[f] : 1e6;
    slowdown[flow.job] = std::max(slowdown[flow.job], std::min(factor, 1e6));
  }
  return slowdown;
}

namespace {
/// ECMP: a flow's spine is a hash of (job, source, destination); links are
/// shared max-min fairly by all flows.
class FairNetwork : public NetworkModel {
public:
  explicit FairNetwork(const SchedCluster &cluster) : graph(cluster) {}
  llvm::StringRef name() const override { return "fair"; }

  std::vector<double> slowdowns(llvm::ArrayRef<NetJob> jobs) override {
    std::vector<Flow> flows;
    for (unsigned j = 0; j < jobs.size(); ++j)
      for (Flow &flow : ringFlows(jobs[j], j)) {
        unsigned spine = 0;
        if (graph.spines > 0) {
          uint64_t h = (uint64_t(jobs[j].job) * 1000003u) ^
                       (uint64_t(flow.src) * 7919u) ^ flow.dst;
          h ^= h >> 17;
          h *= 0x9E3779B97F4A7C15ull;
          spine = (h >> 32) % graph.spines;
        }
        flow.links = graph.path(flow.src, flow.dst, spine);
        flows.push_back(std::move(flow));
      }
    setDemands(graph, jobs, flows);
    return slowdownsFrom(graph, jobs, flows, graph.share(flows));
  }

private:
  LinkGraph graph;
};
} // namespace

std::unique_ptr<NetworkModel> sched::createFairNetwork(const SchedCluster &c) {
  return std::make_unique<FairNetwork>(c);
}

llvm::Expected<std::unique_ptr<NetworkModel>>
sched::createNetworkModel(llvm::StringRef mode, const SchedCluster &cluster,
                          unsigned levels) {
  if (mode == "fair")
    return createFairNetwork(cluster);
  if (mode == "crux") {
    if (levels == 0)
      return badInput("crux needs at least one priority level");
    return createCruxNetwork(cluster, levels);
  }
  return badInput("unknown network model '{0}' (known: fair, crux)", mode);
}
