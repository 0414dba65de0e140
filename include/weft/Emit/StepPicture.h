//===- StepPicture.h - What the pictures of a plan's step are made of -*- C++
//-*-===//
//
// The estimated step of a plan (weft/Eval/StepEvents.h) with what the
// timeline (Timeline.h) and the trace (Trace.h) label it with: each priced
// device's type, node and ratio. docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EMIT_STEPPICTURE_H
#define WEFT_EMIT_STEPPICTURE_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Eval/StepEvents.h"

namespace weft {

/// Priced devices no picture tells apart: one class, one ratio, the same
/// events. They share a lane of the timeline and a thread of the trace.
struct LaneGroup {
  /// The priced device shown (index into step.events.devices).
  unsigned shown = 0;
  /// Every mesh device of the group, ascending.
  std::vector<unsigned> devices;
};

struct StepPicture {
  EstimatedStep step;
  /// Per priced device, its events: [first, second) of step.events.events.
  std::vector<std::pair<size_t, size_t>> eventRanges;
  /// Ordered by their lowest device.
  std::vector<LaneGroup> groups;
  /// Per priced device (parallel to step.events.devices): its share of the
  /// plan's main segment (the one splitting the most values), its integer
  /// size over the extent where the segment has sizes; -1 without
  /// segments.
  std::vector<double> ratios;
  /// Per cluster node, its name.
  std::vector<std::string> nodeNames;
  /// What the picture is of ("plan.mlir on hap-8, fp32"), the cluster's
  /// name and the dtype.
  std::string title, cluster, dtype;
  /// EvalOptions::reservedMemoryFraction: the part of each device's memory
  /// a plan may not use.
  double reservedMemoryFraction = 0;
};

/// Evaluates `plan` on `spec` (evaluatePlanEvents) and labels it.
/// `subject` names the plan in the title. Errors: the evaluator's (bad
/// input).
llvm::Expected<StepPicture> pictureOf(mlir::ModuleOp plan,
                                      const ClusterSpec &spec,
                                      const EvalOptions &options,
                                      llvm::StringRef subject);

/// "V100, ratio 0.191" for priced device `index` of `picture` ("V100"
/// without a ratio).
std::string deviceLabel(const StepPicture &picture, unsigned index);

/// The events of priced device `index`, in start order.
llvm::ArrayRef<StepEvent> eventsOf(const StepPicture &picture, unsigned index);

/// Writes `dir`/timeline.svg (Timeline.h) and `dir`/trace.json (Trace.h)
/// of `plan`, each atomically.
llvm::Error writeStepPictures(llvm::StringRef dir, mlir::ModuleOp plan,
                              const ClusterSpec &spec,
                              const EvalOptions &options,
                              llvm::StringRef subject);

} // namespace weft

#endif // WEFT_EMIT_STEPPICTURE_H
