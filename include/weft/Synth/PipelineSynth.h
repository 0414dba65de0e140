//===- PipelineSynth.h - Pipelined plans: stages, cuts, device groups -*- C++
//-*-===//
//
// Synthesis with pipeline stages (docs/Pipeline.md "Synthesis"): the graph
// program is cut at block boundaries into S contiguous sub-programs, each
// given a contiguous group of cluster nodes, by a dynamic program over
// estimated stage times and memory (weft/Synth/StageCuts.h); each stage's
// SPMD plan is synthesised on its sub-cluster with synthesize(), and the
// stage plans are assembled into one pipelined plan (stage modules,
// spmd.send/recv, spmd.micro_batches, spmd.schedule = "1f1b"), verified and
// priced by the evaluator.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_PIPELINESYNTH_H
#define WEFT_SYNTH_PIPELINESYNTH_H

#include "weft/Synth/Synthesize.h"
#include <functional>
#include <optional>

namespace weft {

/// What synthesizePipeline() tries.
struct PipelineOptions {
  /// Stages S; 0 = auto: 1..maxStages (bounded by nodes and cut points),
  /// the fastest plan that fits.
  unsigned stages = 0;
  /// auto's largest S.
  unsigned maxStages = 8;
  /// Pipeline micro-batches M; 0: from defaultMicroBatches(S, batch),
  /// doubled while no partition keeps every activation in memory and the
  /// micro-batch keeps at least devices / S samples.
  int64_t microBatches = 0;
};

/// The default micro-batch count of S stages: the largest count of at most
/// 4·S that divides the global batch (1 for one stage).
int64_t defaultMicroBatches(unsigned stages, int64_t globalBatch);

/// One stage of the written plan.
struct PipelineStageInfo {
  /// Graph ops [firstOp, endOp) in program order (leaves not counted).
  unsigned firstOp = 0, endOp = 0;
  /// Location of the stage's last op (where the next stage's cut is).
  std::string cutAfter;
  /// Cluster nodes of the stage's group.
  std::vector<unsigned> nodes;
  /// The cut table's estimate of one micro-batch (forward + backward), s.
  double estimatedSeconds = 0;
  /// The stage's synthesis.
  SynthStats stats;
};

/// One S tried by `auto` (or the one asked for).
struct PipelineTrial {
  unsigned stages = 0;
  int64_t microBatches = 0;
  /// The evaluator's step (with gradient-sync overlap), seconds; 0 when
  /// no plan was built.
  double stepSeconds = 0;
  bool fits = false;
  /// Why no plan was built ("" when one was).
  std::string error;
};

/// A pipelined (or, from auto, possibly single-stage) plan.
struct PipelineResult {
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  unsigned stages = 1;
  int64_t microBatches = 1;
  std::vector<PipelineStageInfo> stageInfo;
  /// The evaluator's estimate of the plan (gradient-sync overlap on).
  PlanEstimate estimate;
  std::vector<PipelineTrial> trials;
  double wallSeconds = 0;
};

/// The cut table's view of S stages without synthesising them (a fast
/// price for callers comparing many clusters or stage counts): the
/// dynamic program's partition of `graph` (one micro-batch of
/// `globalBatch` / `microBatches`) on `spec`, its pipeline seconds
/// (Σ stages and links + (M − 1) · slowest; compute at perfect data
/// parallelism, no communication within a stage, no once-per-step tail:
/// an estimate below what synthesis reaches) and its stages. None when no
/// partition fits. Errors: bad input (more stages than nodes or cut
/// points, no @main).
struct PipelineSketch {
  double pipelineSeconds = 0;
  std::vector<PipelineStageInfo> stages;
};
llvm::Expected<std::optional<PipelineSketch>>
sketchPipeline(mlir::ModuleOp graph, const ClusterSpec &spec, unsigned stages,
               int64_t microBatches, int64_t globalBatch,
               const EvalOptions &eval);

/// The graph program of one micro-batch when a step runs as `m`
/// micro-batches (the model imported at batch / m).
using GraphAtMicroBatches =
    std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(int64_t)>;

/// Synthesises a pipelined plan of `globalBatch` samples per step on `spec`.
/// With options.stages = 1 or when auto keeps one stage, the plan is
/// synthesize()'s on the whole cluster (with M micro-batches of gradient
/// accumulation when that fits and one does not). Errors: exit 1 for bad
/// input (S larger than the nodes or the cut points, M not dividing the
/// batch), exit 2 when no plan fits memory.
llvm::Expected<PipelineResult>
synthesizePipeline(const GraphAtMicroBatches &graphAt, int64_t globalBatch,
                   const ClusterSpec &spec, const PipelineOptions &options,
                   const SynthOptions &synth);

} // namespace weft

#endif // WEFT_SYNTH_PIPELINESYNTH_H
