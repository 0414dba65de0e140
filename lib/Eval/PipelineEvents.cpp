//===- PipelineEvents.cpp - A pipelined plan's schedule as events ---------===//
//
// The estimate of a pipelined plan (PipelineEvaluator.cpp) laid out in
// time: one lane per stage (its first device standing for the stage's
// devices), each micro-batch's forward and backward as one block, in the
// schedule's order (docs/Pipeline.md), each waiting for its neighbour's
// block and the transfer between them; the transfers sit on the receiving
// lane's channel, one at a time per link and direction; the once-per-step
// gradient sync and optimizer step after the stage's last backward.
// docs/Evaluator.md, "Pipelined plans".
//
//===----------------------------------------------------------------------===//

#include "PlanEvaluator.h"
#include "weft/Eval/StepEvents.h"

using namespace weft;
using namespace weft::eval;

namespace {

/// One block of a stage's schedule.
struct Block {
  bool backward;
  int64_t microBatch;
};

/// Stage `s` of `numStages` under `gpipe` or 1F1B: M forwards then M
/// backwards, or min(M, S − s) forwards, then one backward and one forward
/// in turn, then the remaining backwards.
std::vector<Block> scheduleOf(unsigned s, unsigned numStages, int64_t m,
                              bool gpipe) {
  std::vector<Block> out;
  int64_t warm = gpipe ? m : std::min<int64_t>(m, int64_t(numStages - s));
  for (int64_t f = 0; f < warm; ++f)
    out.push_back({false, f});
  for (int64_t b = 0; b < m; ++b) {
    out.push_back({true, b});
    if (warm + b < m)
      out.push_back({false, warm + b});
  }
  return out;
}

} // namespace

StepEvents eval::pipelineEvents(mlir::ModuleOp module,
                                const PlanEstimate &estimate,
                                const ClusterSpec &spec) {
  auto mesh =
      module->getAttrOfType<spmd::MeshAttr>(spmd::SpmdDialect::kMeshAttr);
  int64_t perNode = mesh.getDevicesPerNode();
  llvm::ArrayRef<StageEstimate> stages = estimate.stages;
  unsigned numStages = stages.size();
  int64_t m = estimate.microBatches;
  bool gpipe = estimate.schedule == "gpipe";

  StepEvents out;
  std::vector<std::vector<StepEvent>> lanes(numStages);
  for (const StageEstimate &st : stages) {
    EventDevice dev;
    dev.device = unsigned(st.nodes.front() * perNode);
    dev.clusterDevice = st.devices.front();
    dev.node = spec.devices[dev.clusterDevice].node;
    dev.type = spec.typeOf(dev.clusterDevice).name;
    dev.meshClass = unsigned(mesh.getClassIndexOfNode(st.nodes.front()));
    for (int64_t n : st.nodes)
      for (int64_t l = 0; l < perNode; ++l)
        dev.orbit.push_back(unsigned(n * perNode + l));
    out.devices.push_back(std::move(dev));
  }

  // When each block ends (-1: not yet run), per stage and micro-batch.
  std::vector<std::vector<double>> fwdEnd(numStages,
                                          std::vector<double>(m, -1)),
      bwdEnd = fwdEnd;
  std::vector<std::vector<Block>> order;
  for (unsigned s = 0; s < numStages; ++s)
    order.push_back(scheduleOf(s, numStages, m, gpipe));
  std::vector<size_t> next(numStages, 0);
  // Each stage's compute clock; each link's clocks (activations from stage
  // s − 1 and gradients from s + 1 into stage s), one transfer at a time.
  std::vector<double> clock(numStages, 0), fromPrev(numStages, 0),
      fromNext(numStages, 0);
  auto stageEvent = [&](unsigned s, EventKind kind, std::string label,
                        double start, double duration, int64_t mb,
                        bool channel) {
    StepEvent e;
    e.device = out.devices[s].device;
    e.kind = kind;
    e.label = std::move(label);
    e.startSeconds = start;
    e.durationSeconds = duration;
    e.microBatch = mb;
    e.overlapped = channel;
    lanes[s].push_back(std::move(e));
  };
  // Run every stage's next block whose input has arrived, until all ran
  // (the schedules never wait on each other in a cycle).
  for (bool progress = true; progress;) {
    progress = false;
    for (unsigned s = 0; s < numStages; ++s) {
      while (next[s] < order[s].size()) {
        Block b = order[s][next[s]];
        const StageEstimate &st = stages[s];
        double ready = 0, link = 0;
        if (!b.backward && s > 0) {
          if (fwdEnd[s - 1][b.microBatch] < 0)
            break;
          link = stages[s - 1].sendForwardSeconds;
          ready = std::max(fwdEnd[s - 1][b.microBatch], fromPrev[s]) + link;
          fromPrev[s] = ready;
          if (link > 0)
            stageEvent(s, EventKind::Collective,
                       "activations from stage " + std::to_string(s - 1),
                       ready - link, link, b.microBatch, true);
        } else if (b.backward && s + 1 < numStages) {
          if (bwdEnd[s + 1][b.microBatch] < 0)
            break;
          link = st.sendSeconds - st.sendForwardSeconds;
          ready = std::max(bwdEnd[s + 1][b.microBatch], fromNext[s]) + link;
          fromNext[s] = ready;
          if (link > 0)
            stageEvent(s, EventKind::Collective,
                       "gradients from stage " + std::to_string(s + 1),
                       ready - link, link, b.microBatch, true);
        }
        double start = std::max(clock[s], ready);
        double length = b.backward ? st.microBatchSeconds - st.forwardSeconds
                                   : st.forwardSeconds;
        std::string label = "stage " + std::to_string(s) +
                            (b.backward ? " backward" : " forward") +
                            ", micro-batch " + std::to_string(b.microBatch);
        stageEvent(s, b.backward ? EventKind::Backward : EventKind::Forward,
                   std::move(label), start, length, b.microBatch, false);
        clock[s] = start + length;
        (b.backward ? bwdEnd : fwdEnd)[s][b.microBatch] = clock[s];
        ++next[s];
        progress = true;
      }
    }
  }
  for (unsigned s = 0; s < numStages; ++s) {
    if (stages[s].onceSeconds > 0)
      stageEvent(s, EventKind::Update,
                 "gradient sync and optimizer update (once per step)", clock[s],
                 stages[s].onceSeconds, -1, false);
    llvm::stable_sort(lanes[s], [](const StepEvent &a, const StepEvent &b) {
      return a.startSeconds < b.startSeconds;
    });
    for (StepEvent &e : lanes[s]) {
      out.endSeconds = std::max(out.endSeconds, e.endSeconds());
      out.events.push_back(std::move(e));
    }
  }
  return out;
}
