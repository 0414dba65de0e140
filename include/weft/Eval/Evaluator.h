//===- Evaluator.h - The one place a plan is scored ---------------*- C++
//-*-===//
//
// Prices an `spmd` program on a cluster (docs/Design.md §4, §6;
// docs/Evaluator.md): per device, the forward and backward compute of every
// `spmd.local` at the device's shard shapes, the communication of every
// collective and of its dual (weft/Spmd/Duals.h), each parameter strategy's
// gradient synchronisation and optimizer step, and peak memory. The step time
// is
//
//   Σ over steps of (max over devices of compute + max over devices of
//   communication) + optimizer step
//
// where a step is one `spmd.local` together with the collectives just before
// it. Every figure is an estimate (roofline, α-β collectives, or measured
// kernel times from a profile DB where it has them).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_EVALUATOR_H
#define WEFT_EVAL_EVALUATOR_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Cost/Collective.h"
#include "weft/Cost/Memory.h"
#include "weft/Cost/ProfileDB.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <string>
#include <vector>

namespace weft {

struct EvalOptions {
  DType dtype = DType::FP32;
  Optimizer optimizer = Optimizer::Adam;
  /// Measured kernel and collective times preferred to the model.
  const ProfileDB *profile = nullptr;
  /// Overlap gradient synchronisation with the backward compute of earlier
  /// steps (docs/Design.md §4: applied when re-evaluating a final program).
  bool overlapGradientSync = false;
  /// ZeRO-3: keep the gathered parameters from the forward pass for the
  /// backward pass (memory) instead of gathering them again (time).
  bool keepGatheredParameters = false;
  /// Gradient sync in buckets of this many bytes (PyTorch DDP's default,
  /// 25 MiB): the syncs of parameters sharing a collective and a group run
  /// as one collective per bucket, in backward order (docs/CostModel.md
  /// "Gradient buckets"; the emitted program buckets the same way). 0: one
  /// collective per parameter tensor.
  double gradientBucketBytes = 25.0 * 1024 * 1024;
  /// Fraction of device memory kept back (allocator, workspace, context).
  double reservedMemoryFraction = 0.1;
  CollectiveOptions collectives;
  /// Price one device per orbit of devices no cost tells apart
  /// (MeshLayout::representatives) and copy its figures to the others.
  /// Off, every device is priced: the figures are the same (tests check
  /// it), only slower.
  bool foldDevices = true;
};

/// One step: an spmd.local and the collectives that bring its inputs in.
/// Times are maxima over devices.
struct StepEstimate {
  /// "local matmul.split-batch" or "collectives" (a trailing group).
  std::string label;
  /// max over devices of forward + backward compute of the step, seconds.
  double computeSeconds = 0;
  /// max over devices of backward compute alone (for overlap), seconds.
  double backwardSeconds = 0;
  /// max over devices of the step's communication: forward collectives,
  /// their duals and the gradient sync charged to the step, seconds.
  double commSeconds = 0;
  /// max over devices of the gradient-sync part of commSeconds.
  double gradientSyncSeconds = 0;
  /// max over devices of the part of gradientSyncSeconds that runs once
  /// per step under gradient accumulation (syncs of whole gradients:
  /// replicated, ZeRO-1, ZeRO-3 over id axes left); ZeRO-2's runs after
  /// every micro-batch.
  double onceSyncSeconds = 0;
  /// max over devices of commSeconds and of gradientSyncSeconds without
  /// the once-per-step part: what a micro-batch other than the last waits
  /// for (per device, so not commSeconds − onceSyncSeconds when the
  /// maxima sit on different devices).
  double repeatedCommSeconds = 0, repeatedSyncSeconds = 0;
  /// max over devices of the dual (backward) part of commSeconds.
  double dualSeconds = 0;
};

/// How steps of one micro-batch make a training step of `microBatches`
/// micro-batches (docs/Evaluator.md "Gradient accumulation"): the last
/// micro-batch runs every step's whole communication, the others only the
/// repeated part; gradient sync overlaps backward compute when `overlap`.
/// Optimizer and after-update gathers are not included.
struct StepComposition {
  double computeSeconds = 0, commSeconds = 0, exposedSyncSeconds = 0;
  /// computeSeconds + commSeconds − the sync they include + the exposed
  /// sync: the step without its optimizer update.
  double stepSeconds = 0;
};
StepComposition composeSteps(llvm::ArrayRef<StepEstimate> steps,
                             int64_t microBatches, bool overlap);

/// One collective of the program (a relayout op), maxima over devices.
struct CollectiveEstimate {
  /// "spmd.all_gather", ...
  std::string op;
  /// The op's location name (the graph value it moves) or "" when unnamed.
  std::string location;
  /// Mesh axis it runs along.
  unsigned axis = 0;
  /// Largest contribution of one device, bytes.
  double bytes = 0;
  /// Forward time, seconds (max over devices).
  double forwardSeconds = 0;
  /// Backward (dual) time, seconds (max over devices); 0 without gradient.
  double dualSeconds = 0;
};

/// One device's memory at its peak.
struct DeviceMemoryEstimate {
  /// Mesh device id (node-major).
  unsigned device = 0;
  /// Cluster device id and type.
  unsigned clusterDevice = 0;
  std::string type;
  /// Parameters, gradients, optimizer state and kept activations.
  MemoryBreakdown terms;
  /// The largest short-lived buffer (a step's outputs, a gathered
  /// parameter), bytes.
  double transientBytes = 0;
  double capacityBytes = 0;
  bool fits = true;

  double peakBytes() const { return terms.total() + transientBytes; }
};

/// One stage of a pipelined plan (docs/Pipeline.md, docs/Evaluator.md
/// "Pipelined plans"): its own single-stage estimate for one micro-batch and
/// what the pipeline makes of it.
struct StageEstimate {
  unsigned index = 0;
  /// Cluster nodes and cluster devices of the stage's sub-mesh.
  std::vector<int64_t> nodes;
  std::vector<unsigned> devices;
  /// Forward and backward of one micro-batch with the communication that
  /// runs every micro-batch (t_s), seconds.
  double microBatchSeconds = 0;
  /// The forward part of microBatchSeconds (compute and the forward
  /// collectives), seconds; the rest is the backward's.
  double forwardSeconds = 0;
  /// What runs once per step after the stage's last backward: the exposed
  /// once-per-step gradient sync and the optimizer step, seconds.
  double onceSeconds = 0;
  /// Point-to-point transfers to the next stage per micro-batch (the
  /// activations forward and their gradients back; 0 for the last stage),
  /// seconds.
  double sendSeconds = 0;
  /// The activations' part of sendSeconds; the rest is their gradients'.
  double sendForwardSeconds = 0;
  /// Micro-batches whose activations the stage keeps at once (1F1B:
  /// min(M, S − s); GPipe: M).
  int64_t keptMicroBatches = 1;
  /// Largest per-device peak over the stage's devices, bytes.
  double peakMemoryBytes = 0;
  /// Share of the pipeline's makespan the stage is idle.
  double bubbleFraction = 0;
};

/// A plan's estimate. With gradient accumulation (`spmd.micro_batches` =
/// m) `steps` are one micro-batch and the totals are the whole step: m
/// micro-batches, the once-per-step gradient sync (overlapped with the last
/// micro-batch's backward) and one optimizer step.
struct PlanEstimate {
  /// The training step, seconds.
  double stepSeconds = 0;
  /// Micro-batches per step (1: no gradient accumulation).
  int64_t microBatches = 1;
  /// Σ over steps of the compute maxima, seconds.
  double computeSeconds = 0;
  /// Σ over steps of the communication maxima (all communication), seconds.
  double commSeconds = 0;
  /// Gradient sync left after overlap (equal to the whole gradient sync
  /// without overlap), seconds.
  double exposedGradientSyncSeconds = 0;
  /// Optimizer step: max over devices of the update plus the ZeRO
  /// all-gathers of updated shards, seconds.
  double optimizerSeconds = 0;
  /// Communication on the critical path / step time.
  double commShare = 0;
  std::vector<StepEstimate> steps;
  /// Every relayout op in program order.
  std::vector<CollectiveEstimate> collectives;
  std::vector<DeviceMemoryEstimate> memory;
  /// Largest peak over devices, bytes.
  double peakMemoryBytes = 0;
  /// Every device fits.
  bool fits = true;
  /// Timed ops (per device and op) and how many had measured figures.
  unsigned timedOps = 0, measuredOps = 0;
  /// A pipelined plan's schedule ("1f1b" or "gpipe") and stages; empty for
  /// a single-stage plan.
  std::string schedule;
  std::vector<StageEstimate> stages;
  /// A pipelined plan's makespan of the micro-batches' forwards and
  /// backwards (the step without the once-per-step tail), seconds, and the
  /// idle share of the stages' devices in it.
  double pipelineSeconds = 0, bubbleFraction = 0;
};

/// Scores `module` (a verified spmd program with a mesh, segments and one
/// function, or a pipelined plan of stage modules) on `spec`. Errors are bad
/// input: a mesh that does not fit the cluster, or an op the evaluator does not
/// know.
llvm::Expected<PlanEstimate> evaluatePlan(mlir::ModuleOp module,
                                          const ClusterSpec &spec,
                                          const EvalOptions &options = {});

/// `options` with what `module` (a plan, or a graph plans are built from)
/// says of how it runs: its `spmd.gradient_bucket_bytes` when it has one.
/// The evaluator, the plan's ratio problem and the search price with these.
EvalOptions optionsFor(mlir::ModuleOp module, const EvalOptions &options);

/// The estimate as JSON (seconds, bytes; every figure marked an estimate).
llvm::json::Value toJSON(const PlanEstimate &estimate);

/// A pipelined plan's stages as JSON (the `stages` of plan.json and of the
/// estimate; docs/PlanFormat.md).
llvm::json::Array stagesToJSON(llvm::ArrayRef<StageEstimate> stages);

} // namespace weft

#endif // WEFT_EVAL_EVALUATOR_H
