//===- PlanChoice.cpp - Which plan is written, and when to accumulate -----===//

#include "weft/Synth/PlanChoice.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace weft;

llvm::Error weft::shortOfMemory(const PlanEstimate &estimate,
                                const EvalOptions &options) {
  const DeviceMemoryEstimate *worst = nullptr;
  for (const DeviceMemoryEstimate &m : estimate.memory)
    if (!worst || m.peakBytes() - m.capacityBytes >
                      worst->peakBytes() - worst->capacityBytes)
      worst = &m;
  if (!worst)
    return memoryError(0, "no plan fits in memory");
  double usable = worst->capacityBytes * (1 - options.reservedMemoryFraction);
  return memoryError(0,
                     "no plan fits in memory: mesh device {0} ({1}) needs {2} "
                     "under the plan found, more than the {3} it may use "
                     "({4} less the {5}% reserve)",
                     worst->device, worst->type,
                     formatBytes(worst->peakBytes()), formatBytes(usable),
                     formatBytes(worst->capacityBytes),
                     int(std::lround(100 * options.reservedMemoryFraction)));
}

llvm::Expected<ChosenPlan>
weft::choosePlan(mlir::OwningOpRef<mlir::ModuleOp> plan,
                 llvm::ArrayRef<CandidatePlan> candidates,
                 const ClusterSpec &spec, const EvalOptions &options) {
  EvalOptions final = options;
  final.overlapGradientSync = true;
  auto own = evaluatePlan(*plan, spec, final);
  if (!own)
    return own.takeError();
  ChosenPlan out;
  out.searchEstimate = *own;
  const CandidatePlan *better = nullptr;
  std::optional<PlanEstimate> betterEstimate;
  for (const CandidatePlan &c : candidates) {
    auto b = evaluatePlan(c.plan, spec, final);
    if (!b)
      return b.takeError();
    out.candidates.emplace_back(c.name, *b);
    // The fastest candidate that fits; any that fits beats a search's plan
    // that does not.
    bool first = !betterEstimate && !own->fits;
    double best =
        betterEstimate ? betterEstimate->stepSeconds : own->stepSeconds;
    if (b->fits && (first || b->stepSeconds < best)) {
      better = &c;
      betterEstimate = std::move(*b);
    }
  }
  if (better) {
    mlir::ModuleOp kept = better->plan;
    out.plan = mlir::OwningOpRef<mlir::ModuleOp>(kept.clone());
    out.estimate = std::move(*betterEstimate);
    out.source = better->name;
  } else {
    out.plan = std::move(plan);
    out.estimate = std::move(*own);
  }
  return std::move(out);
}

/// Whether `m` micro-batches split `batch` evenly with at least one sample
/// per device in each.
static bool splits(int64_t batch, unsigned devices, int64_t m) {
  return batch % m == 0 && batch / m >= int64_t(std::max(devices, 1u));
}

llvm::Expected<std::vector<int64_t>>
weft::microBatchCounts(llvm::StringRef flag, int64_t batch, unsigned devices,
                       bool batchSymbolic) {
  if (flag == "auto") {
    std::vector<int64_t> counts{1};
    if (batchSymbolic)
      for (int64_t m = 2; splits(batch, devices, m); m *= 2)
        counts.push_back(m);
    return counts;
  }
  int64_t m = 0;
  if (flag.getAsInteger(10, m) || m < 1)
    return badInput("--micro-batches '{0}' is not 'auto' or a positive "
                    "integer",
                    flag);
  if (m == 1)
    return std::vector<int64_t>{1};
  if (!batchSymbolic)
    return badInput("--micro-batches {0} needs a model whose batch dim is "
                    "symbolic (this model fixes it)",
                    m);
  if (!splits(batch, devices, m))
    return badInput("--micro-batches {0} does not split the global batch of "
                    "{1} samples into equal micro-batches of at least one "
                    "sample per device ({2} devices)",
                    m, batch, devices);
  return std::vector<int64_t>{m};
}

llvm::Error
weft::withAccumulation(llvm::ArrayRef<int64_t> counts, int64_t batch,
                       llvm::function_ref<llvm::Error(int64_t)> attempt,
                       llvm::function_ref<void(llvm::StringRef)> progress) {
  for (size_t i = 0; i < counts.size();) {
    int64_t m = counts[i];
    llvm::Error err = attempt(m);
    if (!err)
      return llvm::Error::success();
    double overflow = 0;
    if (i + 1 == counts.size() || !isMemoryShortfall(err, &overflow))
      return err;
    // Activations shrink at most in proportion to the micro-batch: skip the
    // counts that cannot cover the overflow (given only where it bounds
    // every plan of that program).
    ++i;
    while (i + 1 < counts.size() && counts[i] < m * overflow)
      ++i;
    int64_t next = counts[i];
    progress(llvm::formatv(
                 "{0}\ntrying gradient accumulation: {1} micro-batches of {2} "
                 "samples per step{3}",
                 llvm::toString(std::move(err)), next, batch / next,
                 overflow > 1
                     ? llvm::formatv(" (memory short {0:f2}x)", overflow).str()
                     : std::string())
                 .str());
  }
  return llvm::Error::success();
}
