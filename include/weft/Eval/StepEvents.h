//===- StepEvents.h - The estimated step as events per device -----*- C++
//-*-===//
//
// The evaluator's figures laid out in time: per priced device (one per
// orbit, MeshLayout::representatives) an ordered list of events (forward
// and backward compute of every step, collectives and their duals, gradient
// syncs, the optimizer update and its gathers) with start times. The walk
// that prices the plan records them (lib/Eval/StepRecorder.h); nothing is
// priced twice. The layout rules are in docs/Evaluator.md, "The step as
// events": steps run forward in program order and backward in reverse,
// every step's communication starts together on all devices (the
// evaluator's maximum over devices), gradient syncs run after their step's
// backward, on a channel of their own when overlapped.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_STEPEVENTS_H
#define WEFT_EVAL_STEPEVENTS_H

#include "weft/Eval/Evaluator.h"

namespace weft {

/// What a device spends an event on.
enum class EventKind { Forward, Backward, Collective, Sync, Update };

/// "forward", "backward", "collective", "sync", "update".
llvm::StringRef eventKindName(EventKind kind);

/// One interval of one device's estimated step.
struct StepEvent {
  /// Mesh device (a representative of its orbit).
  unsigned device = 0;
  EventKind kind = EventKind::Forward;
  /// The op's location name and variant ("fc matmul.split-batch"), or a
  /// collective's name, axis and value ("all_gather axis 0: bias").
  std::string label;
  double startSeconds = 0, durationSeconds = 0;
  /// Micro-batch the event belongs to (0 without gradient accumulation;
  /// -1 for the optimizer step).
  int64_t microBatch = 0;
  /// On the gradient-sync channel, overlapping the device's backward
  /// compute (EvalOptions::overlapGradientSync).
  bool overlapped = false;

  double endSeconds() const { return startSeconds + durationSeconds; }
};

/// One priced device and the devices it stands for.
struct EventDevice {
  /// Mesh device id (node-major).
  unsigned device = 0;
  /// Cluster device id and its node (index into ClusterSpec::nodes).
  unsigned clusterDevice = 0, node = 0;
  /// Device type name and the device's class in the mesh.
  std::string type;
  unsigned meshClass = 0;
  /// Every mesh device of its orbit (ascending; includes `device`).
  std::vector<unsigned> orbit;
};

/// The estimated step laid out per device.
struct StepEvents {
  /// The priced devices, ascending.
  std::vector<EventDevice> devices;
  /// Every event, by device, then in start order (the sync channel's
  /// events sorted in by start).
  std::vector<StepEvent> events;
  /// When the last event ends, seconds.
  double endSeconds = 0;
};

/// A plan's estimate and its events.
struct EstimatedStep {
  PlanEstimate estimate;
  StepEvents events;
};

/// Evaluates `module` on `spec` as evaluatePlan does and lays the priced
/// figures out as events. Errors: those of evaluatePlan.
llvm::Expected<EstimatedStep> evaluatePlanEvents(mlir::ModuleOp module,
                                                 const ClusterSpec &spec,
                                                 const EvalOptions &options);

} // namespace weft

#endif // WEFT_EVAL_STEPEVENTS_H
