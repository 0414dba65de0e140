//===- EvalJSON.cpp - A plan's estimate as JSON ---------------------------===//

#include "weft/Eval/Evaluator.h"

using namespace weft;

llvm::json::Value weft::toJSON(const PlanEstimate &e) {
  llvm::json::Array steps;
  for (const StepEstimate &s : e.steps)
    steps.push_back(
        llvm::json::Object{{"label", s.label},
                           {"compute_s", s.computeSeconds},
                           {"backward_s", s.backwardSeconds},
                           {"comm_s", s.commSeconds},
                           {"dual_comm_s", s.dualSeconds},
                           {"gradient_sync_s", s.gradientSyncSeconds},
                           {"once_sync_s", s.onceSyncSeconds}});
  llvm::json::Array collectives;
  for (const CollectiveEstimate &c : e.collectives)
    collectives.push_back(llvm::json::Object{{"op", c.op},
                                             {"location", c.location},
                                             {"axis", c.axis},
                                             {"bytes", c.bytes},
                                             {"forward_s", c.forwardSeconds},
                                             {"dual_s", c.dualSeconds}});
  llvm::json::Array memory;
  for (const DeviceMemoryEstimate &m : e.memory)
    memory.push_back(
        llvm::json::Object{{"device", m.device},
                           {"cluster_device", m.clusterDevice},
                           {"type", m.type},
                           {"parameters_bytes", m.terms.parameters},
                           {"gradients_bytes", m.terms.gradients},
                           {"optimizer_state_bytes", m.terms.optimizerState},
                           {"kept_activations_bytes", m.terms.activations},
                           {"transient_bytes", m.transientBytes},
                           {"peak_bytes", m.peakBytes()},
                           {"capacity_bytes", m.capacityBytes},
                           {"fits", m.fits}});
  llvm::json::Object out{
      {"estimate", true},
      {"step_time_s", e.stepSeconds},
      {"micro_batches", e.microBatches},
      {"compute_s", e.computeSeconds},
      {"comm_s", e.commSeconds},
      {"exposed_gradient_sync_s", e.exposedGradientSyncSeconds},
      {"optimizer_s", e.optimizerSeconds},
      {"comm_share", e.commShare},
      {"peak_memory_bytes", e.peakMemoryBytes},
      {"fits", e.fits},
      {"timed_ops", e.timedOps},
      {"measured_ops", e.measuredOps},
      {"steps", std::move(steps)},
      {"collectives", std::move(collectives)},
      {"memory", std::move(memory)}};
  if (!e.stages.empty()) {
    out["schedule"] = e.schedule;
    out["pipeline_s"] = e.pipelineSeconds;
    out["bubble_fraction"] = e.bubbleFraction;
    out["stages"] = stagesToJSON(e.stages);
  }
  return out;
}

llvm::json::Array weft::stagesToJSON(llvm::ArrayRef<StageEstimate> stages) {
  llvm::json::Array out;
  for (const StageEstimate &s : stages)
    out.push_back(llvm::json::Object{{"index", s.index},
                                     {"nodes", llvm::json::Array(s.nodes)},
                                     {"devices", llvm::json::Array(s.devices)},
                                     {"micro_batch_s", s.microBatchSeconds},
                                     {"once_per_step_s", s.onceSeconds},
                                     {"send_s", s.sendSeconds},
                                     {"kept_micro_batches", s.keptMicroBatches},
                                     {"peak_memory_bytes", s.peakMemoryBytes},
                                     {"bubble_fraction", s.bubbleFraction},
                                     {"estimate", true}});
  return out;
}
