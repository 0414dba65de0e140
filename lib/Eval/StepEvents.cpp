//===- StepEvents.cpp - The estimated step as events per device -----------===//
//
// StepRecorder keeps what the walk priced, step by step, and lays it out in
// time (docs/Evaluator.md, "The step as events"):
//
//   per micro-batch:
//     forward, steps in program order: the step's relayout collectives,
//       its forward compute, its recipe all-reduces;
//     backward, steps in reverse: the step's backward compute, then its
//       recipe and relayout duals (in reverse) and, without overlap, the
//       gradient syncs charged to it;
//   the optimizer update, then the gathers after it.
//
// Every group of communication starts together on all devices (a barrier
// at the latest device), which is where the evaluator takes its maximum
// over devices; compute runs per device from there. Overlapped gradient
// syncs run on one channel, each after its step's backward, as
// composeSteps has them.
//
//===----------------------------------------------------------------------===//

#include "PlanEvaluator.h"
#include "Spmd/IR/SpmdOps.h"
#include "StepRecorder.h"
#include "weft/Spmd/Duals.h"
#include "llvm/Support/FormatVariadic.h"

using namespace weft;
using namespace weft::eval;

llvm::StringRef weft::eventKindName(EventKind kind) {
  switch (kind) {
  case EventKind::Forward:
    return "forward";
  case EventKind::Backward:
    return "backward";
  case EventKind::Collective:
    return "collective";
  case EventKind::Sync:
    return "sync";
  case EventKind::Update:
    return "update";
  }
  llvm_unreachable("unknown event kind");
}

namespace {

std::string locationName(mlir::Location loc) {
  if (auto name = loc.dyn_cast<mlir::NameLoc>())
    return name.getName().str();
  if (auto fused = loc.dyn_cast<mlir::FusedLoc>())
    for (mlir::Location inner : fused.getLocations())
      if (auto name = inner.dyn_cast<mlir::NameLoc>())
        return name.getName().str();
  return "";
}

/// "fc matmul.split-batch": the op's location name (or its graph op's)
/// and, for an spmd.local, its variant.
std::string opLabel(mlir::Operation *op) {
  std::string name = locationName(op->getLoc());
  auto local = llvm::dyn_cast<spmd::LocalOp>(op);
  if (!local)
    return name.empty() ? op->getName().getStringRef().str() : name;
  for (mlir::Operation &inner : local.getBody().front()) {
    if (!name.empty())
      break;
    if (llvm::isa<spmd::YieldOp>(inner))
      continue;
    name = locationName(inner.getLoc());
    if (name.empty())
      name = inner.getName().getStringRef().str();
  }
  return (name + " " + local.getVariant()).str();
}

bool anyPositive(const std::vector<double> &v) {
  return llvm::any_of(v, [](double x) { return x > 0; });
}

/// Per priced device a clock and the events laid so far.
class Schedule {
public:
  explicit Schedule(unsigned numReps) : clock(numReps, 0.0), laid(numReps) {}

  /// Every device waits for the latest.
  void barrier(double atLeast = 0) {
    double t = atLeast;
    for (double c : clock)
      t = std::max(t, c);
    clock.assign(clock.size(), t);
  }
  double latest() const {
    return clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
  }
  /// Device `r` spends `seconds` on an event from its clock on.
  void lay(unsigned r, EventKind kind, llvm::StringRef label, double seconds,
           int64_t microBatch) {
    if (seconds <= 0)
      return;
    laid[r].push_back(
        {0, kind, label.str(), clock[r], seconds, microBatch, false});
    clock[r] += seconds;
  }
  /// A group of communication: one barrier, then each device's part.
  void layGroup(llvm::ArrayRef<std::tuple<EventKind, const std::string *,
                                          const std::vector<double> *>>
                    group,
                int64_t microBatch) {
    if (!llvm::any_of(
            group, [](const auto &g) { return anyPositive(*std::get<2>(g)); }))
      return;
    barrier();
    for (const auto &[kind, label, seconds] : group)
      for (unsigned r = 0; r < clock.size(); ++r)
        lay(r, kind, *label, (*seconds)[r], microBatch);
  }
  /// An overlapped sync: from `start` on, beside the device's clock.
  void layBeside(unsigned r, llvm::StringRef label, double start,
                 double seconds, int64_t microBatch) {
    if (seconds > 0)
      laid[r].push_back(
          {0, EventKind::Sync, label.str(), start, seconds, microBatch, true});
  }

  std::vector<double> clock;
  std::vector<std::vector<StepEvent>> laid;
};

} // namespace

StepRecorder::StepRecorder(const MeshLayout &layout)
    : reps(layout.representatives()) {
  std::vector<int> index(layout.numDevices(), -1);
  for (auto [i, d] : llvm::enumerate(reps)) {
    index[d] = int(i);
    EventDevice dev;
    dev.device = d;
    dev.clusterDevice = layout.clusterDevice(d);
    dev.node = layout.cluster().devices[dev.clusterDevice].node;
    dev.type = layout.typeOf(d).name;
    dev.meshClass = layout.meshClass(d);
    shape.devices.push_back(std::move(dev));
  }
  for (unsigned d = 0; d < layout.numDevices(); ++d)
    shape.devices[index[layout.representativeOf(d)]].orbit.push_back(d);
}

std::vector<double>
StepRecorder::pick(const std::vector<double> &perDevice) const {
  std::vector<double> out;
  out.reserve(reps.size());
  for (unsigned d : reps)
    out.push_back(perDevice[d]);
  return out;
}

void StepRecorder::compute(mlir::Operation *op,
                           const std::vector<double> &forward,
                           const std::vector<double> &backward) {
  lastOp = opLabel(op);
  open.push_back(
      {Part::Compute, lastOp, lastOp, pick(forward), pick(backward)});
}

void StepRecorder::relayout(mlir::Operation *op, unsigned axis,
                            const std::vector<double> &forward,
                            const std::vector<double> &dual) {
  std::string value = locationName(op->getLoc());
  std::string suffix = value.empty() ? "" : ": " + value;
  llvm::StringRef name = op->getName().stripDialect();
  std::string dualName = "dual";
  if (std::optional<spmd::CollectiveDual> d = spmd::dualOf(op))
    dualName = spmd::toString(d->backward).str();
  open.push_back({Part::Relayout,
                  llvm::formatv("{0} axis {1}{2}", name, axis, suffix).str(),
                  llvm::formatv("{0} axis {1} (dual of {2}){3}", dualName, axis,
                                name, suffix)
                      .str(),
                  pick(forward), pick(dual)});
}

void StepRecorder::recipe(const std::vector<double> &forward,
                          const std::vector<double> &dual) {
  std::string label = "all_reduce (recipe of " + lastOp + ")";
  open.push_back(
      {Part::Recipe, label, label + " backward", pick(forward), pick(dual)});
}

void StepRecorder::sync(const std::vector<double> &seconds, bool once) {
  Item item{Part::Sync, "gradient sync", "gradient sync",
            std::vector<double>(reps.size()), pick(seconds)};
  item.once = once;
  open.push_back(std::move(item));
}

void StepRecorder::closeStep() {
  steps.push_back(std::move(open));
  open.clear();
}

void StepRecorder::optimizer(const std::vector<double> &update,
                             const std::vector<double> &afterUpdate) {
  this->update = pick(update);
  this->afterUpdate = pick(afterUpdate);
}

StepEvents StepRecorder::layOut(bool overlapSync, int64_t microBatches) const {
  using Group = llvm::SmallVector<
      std::tuple<EventKind, const std::string *, const std::vector<double> *>,
      8>;
  unsigned numReps = reps.size();
  Schedule s(numReps);
  auto of = [](const std::vector<Item> &step, Part part) {
    llvm::SmallVector<const Item *, 8> items;
    for (const Item &item : step)
      if (item.part == part)
        items.push_back(&item);
    return items;
  };
  for (int64_t mb = 0; mb < microBatches; ++mb) {
    bool last = mb + 1 == microBatches;
    for (const std::vector<Item> &step : steps) {
      Group relayouts, recipes;
      for (const Item *item : of(step, Part::Relayout))
        relayouts.push_back(
            {EventKind::Collective, &item->label, &item->forward});
      s.layGroup(relayouts, mb);
      for (const Item *item : of(step, Part::Compute))
        for (unsigned r = 0; r < numReps; ++r)
          s.lay(r, EventKind::Forward, item->label, item->forward[r], mb);
      for (const Item *item : of(step, Part::Recipe))
        recipes.push_back(
            {EventKind::Collective, &item->label, &item->forward});
      s.layGroup(recipes, mb);
    }
    // The gradient-sync channel is free from here on.
    double channel = s.latest();
    for (const std::vector<Item> &step : llvm::reverse(steps)) {
      auto computes = of(step, Part::Compute), recipes = of(step, Part::Recipe),
           relayouts = of(step, Part::Relayout);
      for (const Item *item : llvm::reverse(computes))
        for (unsigned r = 0; r < numReps; ++r)
          s.lay(r, EventKind::Backward, item->label, item->backward[r], mb);
      Group comm;
      for (const Item *item : llvm::reverse(recipes))
        comm.push_back(
            {EventKind::Collective, &item->dualLabel, &item->backward});
      for (const Item *item : llvm::reverse(relayouts))
        comm.push_back(
            {EventKind::Collective, &item->dualLabel, &item->backward});
      llvm::SmallVector<const Item *, 8> syncs;
      for (const Item *item : of(step, Part::Sync))
        if (last || !item->once)
          syncs.push_back(item);
      if (!overlapSync)
        for (const Item *item : syncs)
          comm.push_back({EventKind::Sync, &item->label, &item->backward});
      s.layGroup(comm, mb);
      if (!overlapSync)
        continue;
      // A step's syncs start once every device is past its backward and
      // the channel is free.
      double start = std::max(channel, s.latest());
      for (const Item *item : syncs) {
        double longest = 0;
        for (unsigned r = 0; r < numReps; ++r) {
          s.layBeside(r, item->label, start, item->backward[r], mb);
          longest = std::max(longest, item->backward[r]);
        }
        start += longest;
      }
      channel = std::max(channel, start);
    }
    // The next micro-batch (or the update) waits for the exposed syncs.
    s.barrier(overlapSync ? channel : 0);
  }
  s.barrier();
  for (unsigned r = 0; r < numReps && !update.empty(); ++r)
    s.lay(r, EventKind::Update, "optimizer update", update[r], -1);
  std::string gathers = "all_gather after the update";
  if (!afterUpdate.empty())
    s.layGroup({{EventKind::Collective, &gathers, &afterUpdate}}, -1);

  StepEvents out = shape;
  for (unsigned r = 0; r < numReps; ++r) {
    std::vector<StepEvent> &laid = s.laid[r];
    std::stable_sort(laid.begin(), laid.end(),
                     [](const StepEvent &a, const StepEvent &b) {
                       return a.startSeconds < b.startSeconds;
                     });
    for (StepEvent &e : laid) {
      e.device = reps[r];
      out.endSeconds = std::max(out.endSeconds, e.endSeconds());
      out.events.push_back(std::move(e));
    }
  }
  return out;
}

llvm::Expected<EstimatedStep>
weft::evaluatePlanEvents(mlir::ModuleOp module, const ClusterSpec &spec,
                         const EvalOptions &options) {
  EstimatedStep out;
  auto estimate = eval::evaluate(module, spec, options, &out.events);
  if (!estimate)
    return estimate.takeError();
  out.estimate = std::move(*estimate);
  return out;
}
