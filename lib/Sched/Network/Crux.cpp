//===- Crux.cpp - GPU-intensity-aware communication scheduling -----------===//
//
// Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
// Training", SIGCOMM'24:
//  1. GPU intensity of a job = GPU-seconds of computation per iteration /
//     seconds of communication per iteration (alone on the network);
//  2. jobs in decreasing intensity pick, for each flow, the spine whose path
//     is least loaded so far (instead of ECMP hashing);
//  3. the contention DAG links jobs that share a link (weight: the smaller
//     intensity of the two); priorities are compressed to K levels by a
//     max-K-cut dynamic program over the intensity order;
//  4. links serve levels in strict priority, max-min within a level, each
//     flow up to its demand (NetworkImpl.h).
//
//===----------------------------------------------------------------------===//

#include "NetworkImpl.h"
#include <algorithm>
#include <limits>
#include <numeric>

using namespace weft;
using namespace weft::sched;

std::vector<unsigned>
sched::compressPriorities(const std::vector<std::vector<double>> &weight,
                          unsigned levels) {
  unsigned n = weight.size();
  std::vector<unsigned> level(n, 0);
  if (n == 0 || levels <= 1)
    return level;
  if (levels >= n) {
    std::iota(level.begin(), level.end(), 0);
    return level;
  }
  // inside[a][b]: weight of edges among jobs a..b-1 (a < b <= n).
  std::vector<std::vector<double>> inside(n + 1, std::vector<double>(n + 1, 0));
  for (unsigned a = 0; a < n; ++a)
    for (unsigned b = a + 1; b <= n; ++b) {
      double add = 0;
      for (unsigned i = a; i + 1 < b; ++i)
        add += weight[i][b - 1];
      inside[a][b] = inside[a][b - 1] + add;
    }
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][b]: minimal inside weight splitting the first b jobs in k levels.
  std::vector<std::vector<double>> best(levels + 1,
                                        std::vector<double>(n + 1, inf));
  std::vector<std::vector<unsigned>> cut(levels + 1,
                                         std::vector<unsigned>(n + 1, 0));
  best[0][0] = 0;
  for (unsigned k = 1; k <= levels; ++k)
    for (unsigned b = 1; b <= n; ++b)
      for (unsigned a = k - 1; a < b; ++a) {
        double value = best[k - 1][a] + inside[a][b];
        if (value < best[k][b]) {
          best[k][b] = value;
          cut[k][b] = a;
        }
      }
  unsigned k = levels, b = n;
  while (k > 0 && b > 0) {
    unsigned a = cut[k][b];
    for (unsigned i = a; i < b; ++i)
      level[i] = k - 1;
    b = a;
    --k;
  }
  return level;
}

namespace {
class CruxNetwork : public NetworkModel {
public:
  CruxNetwork(const SchedCluster &cluster, unsigned levels)
      : graph(cluster), levels(levels) {}
  llvm::StringRef name() const override { return "crux"; }

  std::vector<double> slowdowns(llvm::ArrayRef<NetJob> jobs) override {
    unsigned n = jobs.size();
    std::vector<std::vector<Flow>> byJob(n);
    std::vector<double> intensity(n, 0), aloneS(n, 0);
    for (unsigned j = 0; j < n; ++j) {
      byJob[j] = ringFlows(jobs[j], j);
      double alone = 0;
      unsigned gpus = 0;
      for (const NodeShare &share : jobs[j].shares)
        gpus += share.second;
      for (const Flow &flow : byJob[j]) {
        double cap = std::numeric_limits<double>::infinity();
        for (unsigned link : graph.path(flow.src, flow.dst, 0))
          cap = std::min(cap, graph.capacity[link]);
        alone = std::max(alone, jobs[j].profile.bytesPerGpu / cap);
      }
      intensity[j] = alone > 0 ? gpus * jobs[j].profile.computeS / alone : 1e12;
    }
    std::vector<unsigned> order(n);
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return intensity[a] > intensity[b];
    });
    // Path selection, most intense jobs first.
    std::vector<double> load(graph.capacity.size(), 0);
    for (unsigned j : order) {
      double demand = jobs[j].profile.bytesPerGpu /
                      std::max(1e-9, jobs[j].profile.computeS + aloneS[j]);
      for (Flow &flow : byJob[j]) {
        unsigned spines =
            graph.crossesSpine(flow.src, flow.dst) ? graph.spines : 1;
        double bestCost = std::numeric_limits<double>::infinity();
        for (unsigned s = 0; s < spines; ++s) {
          std::vector<unsigned> links = graph.path(flow.src, flow.dst, s);
          double cost = 0;
          for (unsigned link : links)
            cost = std::max(cost, (load[link] + demand) / graph.capacity[link]);
          if (cost < bestCost) {
            bestCost = cost;
            flow.links = std::move(links);
          }
        }
        for (unsigned link : flow.links)
          load[link] += demand;
      }
    }
    // Contention DAG over the intensity order and priority compression.
    std::vector<std::vector<unsigned>> linkUsers(graph.capacity.size());
    std::vector<unsigned> rank(n);
    for (unsigned r = 0; r < n; ++r)
      rank[order[r]] = r;
    for (unsigned j = 0; j < n; ++j)
      for (const Flow &flow : byJob[j])
        for (unsigned link : flow.links)
          if (linkUsers[link].empty() || linkUsers[link].back() != rank[j])
            linkUsers[link].push_back(rank[j]);
    std::vector<unsigned> level(n, 0);
    if (n <= 1500) {
      std::vector<std::vector<double>> weight(n, std::vector<double>(n, 0));
      for (auto &users : linkUsers) {
        llvm::sort(users);
        users.erase(std::unique(users.begin(), users.end()), users.end());
        for (unsigned a = 0; a < users.size(); ++a)
          for (unsigned b = a + 1; b < users.size(); ++b)
            weight[users[a]][users[b]] = std::min(intensity[order[users[a]]],
                                                  intensity[order[users[b]]]);
      }
      level = compressPriorities(weight, levels);
    } else {
      for (unsigned r = 0; r < n; ++r)
        level[r] = r * levels / n;
    }
    std::vector<Flow> flows;
    for (unsigned j = 0; j < n; ++j)
      for (Flow &flow : byJob[j]) {
        flow.level = level[rank[j]];
        flows.push_back(std::move(flow));
      }
    setDemands(graph, jobs, flows);
    return slowdownsFrom(graph, jobs, flows, graph.share(flows));
  }

private:
  LinkGraph graph;
  unsigned levels;
};
} // namespace

std::unique_ptr<NetworkModel> sched::createCruxNetwork(const SchedCluster &c,
                                                       unsigned levels) {
  return std::make_unique<CruxNetwork>(c, levels);
}
