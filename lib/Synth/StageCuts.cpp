//===- StageCuts.cpp - Cut points and device groups of pipeline stages ----===//
//
// Two dynamic programs over (stages placed, boundary, node): the least
// slowest stage, then, for each bound on the slowest stage of a ladder above
// that least, the least fill under the bound. The pipeline time of each is
// computed exactly and the best kept.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/StageCuts.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace weft::synth;

StageCostModel::~StageCostModel() = default;

double StageCostModel::recomputedSeconds(unsigned, unsigned, unsigned, unsigned,
                                         int64_t) const {
  return std::numeric_limits<double>::infinity();
}

int64_t weft::synth::inFlightMicroBatches(unsigned s, unsigned stages,
                                          int64_t microBatches) {
  return std::min<int64_t>(microBatches, int64_t(stages) - int64_t(s));
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One DP over (stages placed, boundary, node). Bottleneck mode minimises
/// the slowest stage or link; fill mode minimises their sum among
/// partitions whose every stage and link is at most `bound`.
class StageDP {
public:
  StageDP(const StageCostModel &model, unsigned stages, int64_t m)
      : model(model), stages(stages), m(m), cuts(model.numCuts()),
        nodes(model.numNodes()) {}

  std::optional<StagePartition> run(bool bottleneck, double bound) {
    unsigned width = (cuts + 1) * (nodes + 1);
    std::vector<double> prev(width, kInf), cur(width, kInf);
    std::vector<std::vector<unsigned>> parent(
        stages, std::vector<unsigned>(width, ~0u));
    prev[0] = 0;
    for (unsigned s = 0; s < stages; ++s) {
      std::fill(cur.begin(), cur.end(), kInf);
      int64_t inFlight = inFlightMicroBatches(s, stages, m);
      unsigned left = stages - s - 1;
      for (unsigned b = s + 1; b + left <= cuts; ++b)
        for (unsigned v = s + 1; v + left <= nodes; ++v) {
          // The last stage ends at the program's end on the last node.
          if (left == 0 && (b != cuts || v != nodes))
            continue;
          double best = kInf;
          unsigned arg = ~0u;
          for (unsigned a = s; a < b; ++a) {
            if (s == 0 && a != 0)
              break;
            double link = a > 0 ? model.linkSeconds(a) : 0;
            if (link > bound)
              continue;
            for (unsigned u = s; u < v; ++u) {
              if (s == 0 && u != 0)
                break;
              double before = prev[a * (nodes + 1) + u];
              if (before == kInf)
                continue;
              double t = timeOf(a, b, u, v, inFlight, nullptr);
              if (t > bound)
                continue;
              double value =
                  bottleneck ? std::max({before, link, t}) : before + link + t;
              if (value < best) {
                best = value;
                arg = a * (nodes + 1) + u;
              }
            }
          }
          cur[b * (nodes + 1) + v] = best;
          parent[s][b * (nodes + 1) + v] = arg;
        }
      std::swap(prev, cur);
    }
    if (prev[cuts * (nodes + 1) + nodes] == kInf)
      return std::nullopt;
    StagePartition out;
    out.cuts.assign(stages + 1, 0);
    out.nodes.assign(stages + 1, 0);
    unsigned at = cuts * (nodes + 1) + nodes;
    for (unsigned s = stages; s-- > 0;) {
      out.cuts[s + 1] = at / (nodes + 1);
      out.nodes[s + 1] = at % (nodes + 1);
      at = parent[s][at];
    }
    for (unsigned s = 0; s < stages; ++s) {
      bool recompute = false;
      double t =
          timeOf(out.cuts[s], out.cuts[s + 1], out.nodes[s], out.nodes[s + 1],
                 inFlightMicroBatches(s, stages, m), &recompute);
      out.stageSeconds.push_back(t);
      out.recompute.push_back(recompute);
      out.slowest = std::max(out.slowest, t);
      out.fill += t;
      if (s + 1 < stages) {
        double l = model.linkSeconds(out.cuts[s + 1]);
        out.linkSeconds.push_back(l);
        out.slowest = std::max(out.slowest, l);
        out.fill += l;
      }
    }
    return out;
  }

private:
  /// The stage's time as it is when it fits, else recomputing (infinity
  /// when neither fits).
  double timeOf(unsigned a, unsigned b, unsigned u, unsigned v,
                int64_t inFlight, bool *recompute) const {
    if (model.fits(a, b, u, v, inFlight))
      return model.stageSeconds(a, b, u, v);
    if (recompute)
      *recompute = true;
    return model.recomputedSeconds(a, b, u, v, inFlight);
  }

  const StageCostModel &model;
  unsigned stages;
  int64_t m;
  unsigned cuts, nodes;
};

} // namespace

std::optional<StagePartition>
weft::synth::chooseStages(const StageCostModel &model, unsigned stages,
                          int64_t microBatches) {
  if (stages == 0 || stages > model.numCuts() || stages > model.numNodes())
    return std::nullopt;
  StageDP dp(model, stages, std::max<int64_t>(microBatches, 1));
  auto least = dp.run(/*bottleneck=*/true, kInf);
  if (!least)
    return std::nullopt;
  std::optional<StagePartition> best = least;
  // A slightly slower slowest stage may buy a much smaller fill (fewer
  // micro-batches pay the slowest than the fill's stages and links).
  for (unsigned k = 0; k <= 10; ++k) {
    double bound = least->slowest * (1 + 0.1 * k) * (1 + 1e-12);
    auto p = dp.run(/*bottleneck=*/false, bound);
    if (p && p->pipelineSeconds(microBatches) <
                 best->pipelineSeconds(microBatches) * (1 - 1e-12))
      best = std::move(p);
  }
  return best;
}
