//===- StepComposition.cpp - Steps into a step time and memory -----------===//
//
// Σ over steps of (max compute + max communication) + optimizer, the
// overlap of gradient sync with backward compute, and per-device memory.
//
//===----------------------------------------------------------------------===//

#include "PlanEvaluator.h"
#include "StepRecorder.h"
#include <algorithm>

using namespace weft;
using namespace weft::eval;

void PlanEvaluator::closeStep(llvm::StringRef label) {
  StepEstimate s;
  s.label = label.str();
  // max over devices of forward + backward (0 without devices).
  for (unsigned d = 0; d < n; ++d) {
    double total = step.forward[d] + step.backward[d];
    s.computeSeconds = d == 0 ? total : std::max(s.computeSeconds, total);
  }
  s.backwardSeconds = maxOf(step.backward);
  s.commSeconds = maxOf(step.comm);
  s.gradientSyncSeconds = maxOf(step.sync);
  s.onceSyncSeconds = maxOf(step.onceSync);
  for (unsigned d = 0; d < n; ++d) {
    s.repeatedCommSeconds =
        std::max(s.repeatedCommSeconds, step.comm[d] - step.onceSync[d]);
    s.repeatedSyncSeconds =
        std::max(s.repeatedSyncSeconds, step.sync[d] - step.onceSync[d]);
  }
  s.dualSeconds = maxOf(step.dual);
  out.steps.push_back(std::move(s));
  // Cleared in place: a fresh accumulator allocated six vectors of the
  // mesh's devices per step.
  for (auto *v : {&step.forward, &step.backward, &step.comm, &step.sync,
                  &step.onceSync, &step.dual})
    std::fill(v->begin(), v->end(), 0.0);
  if (recorder)
    recorder->closeStep();
}

PlanEstimate PlanEvaluator::finish() {
  // Optimizer: an elementwise pass over the state each device updates.
  std::vector<double> update(n);
  for (unsigned d : reps)
    update[d] = opTime(layout.typeOf(d), options.dtype,
                       optimizerUpdateWork(optimizerElements[d],
                                           options.optimizer, options.dtype),
                       options.profile)
                    .seconds;
  double updateSeconds = maxOf(update), gatherSeconds = maxOf(afterUpdate);
  if (recorder)
    recorder->optimizer(update, afterUpdate);
  out.optimizerSeconds = updateSeconds + gatherSeconds;

  StepComposition total = composeSteps(
      out.steps, microBatches,
      overlapsGradientSync(options.overlapGradientSync, options.profile));
  out.microBatches = microBatches;
  out.computeSeconds = total.computeSeconds;
  out.commSeconds = total.commSeconds + gatherSeconds;
  out.exposedGradientSyncSeconds = total.exposedSyncSeconds;
  out.stepSeconds = total.stepSeconds + out.optimizerSeconds;
  double commCritical = out.stepSeconds - out.computeSeconds - updateSeconds;
  out.commShare = out.stepSeconds > 0 ? commCritical / out.stepSeconds : 0;

  for (unsigned d = 0; d < n; ++d) {
    unsigned r = layout.representativeOf(d);
    MemoryCounts c = counts[r];
    c.keptActivationElements = kept[r] / bytesPerElement(options.dtype);
    DeviceMemoryEstimate m;
    m.device = d;
    m.clusterDevice = layout.clusterDevice(d);
    m.type = layout.typeOf(d).name;
    m.terms = deviceMemory(c, options.dtype, options.optimizer);
    m.transientBytes = transient[r];
    m.capacityBytes = layout.typeOf(d).memoryBytes();
    m.fits =
        m.peakBytes() <= m.capacityBytes * (1 - options.reservedMemoryFraction);
    out.fits &= m.fits;
    out.peakMemoryBytes = std::max(out.peakMemoryBytes, m.peakBytes());
    out.memory.push_back(std::move(m));
  }
  return std::move(out);
}

StepComposition weft::composeSteps(llvm::ArrayRef<StepEstimate> steps,
                                   int64_t microBatches, bool overlap) {
  // Gradient accumulation (`spmd.micro_batches` = m): the steps are one
  // micro-batch, run m times; the sync of replicated and ZeRO-1 gradients
  // (onceSync) runs in the last micro-batch only.
  double m = double(microBatches);
  StepComposition out;
  double critical = 0, repeatedCritical = 0, comm = 0, repeatedComm = 0;
  for (const StepEstimate &s : steps) {
    out.computeSeconds += m * s.computeSeconds;
    comm += s.commSeconds;
    repeatedComm += s.repeatedCommSeconds;
    critical += s.computeSeconds + s.commSeconds - s.gradientSyncSeconds;
    repeatedCritical +=
        s.computeSeconds + s.repeatedCommSeconds - s.repeatedSyncSeconds;
  }
  // The gradient sync left exposed in one micro-batch: all of it (the
  // last) or only the repeated part.
  auto exposed = [&](bool last) {
    auto syncOf = [&](const StepEstimate &s) {
      return last ? s.gradientSyncSeconds : s.repeatedSyncSeconds;
    };
    double sync = 0;
    for (const StepEstimate &s : steps)
      sync += syncOf(s);
    if (!overlap)
      return sync;
    // Backward runs the steps in reverse; a step's gradient sync may start
    // once its backward is done and runs on one channel in that order.
    double t = 0, channel = 0;
    for (const StepEstimate &s : llvm::reverse(steps)) {
      t += s.backwardSeconds + s.dualSeconds;
      if (double mine = syncOf(s); mine > 0)
        channel = std::max(channel, t) + mine;
    }
    return std::max(0.0, channel - t);
  };
  out.commSeconds = comm + (m - 1) * repeatedComm;
  out.exposedSyncSeconds =
      exposed(true) + (microBatches > 1 ? (m - 1) * exposed(false) : 0);
  out.stepSeconds =
      critical + (m - 1) * repeatedCritical + out.exposedSyncSeconds;
  return out;
}
