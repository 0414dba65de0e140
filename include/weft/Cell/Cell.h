//===- Cell.h - A job's Cell: devices by type and stages ----------*- C++
//-*-===//
//
// A Cell (docs/Cells.md) is what a scheduler gives one training job: a
// multiset of devices by type (e.g. 8 A100 + 4 T4) and a pipeline stage
// count. Its estimate comes from the compiler (CellEstimator.h): iteration
// time, samples/s, per-device memory peak, feasible or not and why.
// Nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CELL_CELL_H
#define WEFT_CELL_CELL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace weft {
namespace cell {

/// Devices by type name (the cluster spec's type names); counts > 0. A
/// std::map so that equal multisets compare and print alike.
using DeviceMultiset = std::map<std::string, unsigned>;

/// Total devices of a multiset.
unsigned totalDevices(const DeviceMultiset &devices);

/// "8xA100+4xT4" (types in name order).
std::string formatMultiset(const DeviceMultiset &devices);

/// Parses "8xA100+4xT4" (or "A100=8,T4=4"). Errors: bad input.
llvm::Expected<DeviceMultiset> parseMultiset(llvm::StringRef text);

/// One Cell.
struct Cell {
  DeviceMultiset devices;
  /// Pipeline stages (1: one SPMD plan over all devices).
  unsigned stages = 1;

  bool operator<(const Cell &o) const {
    return std::tie(devices, stages) < std::tie(o.devices, o.stages);
  }
  bool operator==(const Cell &o) const {
    return devices == o.devices && stages == o.stages;
  }
  /// Several device types.
  bool heterogeneous() const { return devices.size() > 1; }
};

/// "8xA100+4xT4/S2".
std::string formatCell(const Cell &cell);

/// How an estimate was obtained.
enum class EstimateSource {
  /// Full synthesis (synthesize() with its default budget, the plan scored
  /// by the evaluator with gradient-sync overlap, as weftc writes it).
  Full,
  /// The fast mode (CellEstimator.h): the search space of the Cell priced
  /// once, the plans of earlier Cells replayed on it with the seed plans,
  /// calibrated by the model's first full synthesis.
  Fast,
  /// Not estimated: its lower bound exceeds the best Cell found.
  Pruned,
};

llvm::StringRef sourceName(EstimateSource source);

/// The compiler's answer for one Cell.
struct CellEstimate {
  Cell cell;
  bool feasible = false;
  /// Why not, when infeasible ("no plan fits memory: ...", "pipeline
  /// stages are not available", ...).
  std::string reason;
  /// Seconds per training iteration (one global batch), an estimate.
  double iterationSeconds = 0;
  /// Global batch / iterationSeconds.
  double samplesPerSecond = 0;
  /// Gradient-accumulation micro-batches per iteration (pipeline
  /// micro-batches with stages > 1).
  unsigned microBatches = 1;
  /// Largest per-device memory peak of each device type, bytes.
  std::map<std::string, double> peakMemoryBytes;
  /// training FLOPs / Σ peak FLOP/s of the Cell's devices, seconds.
  double lowerBoundSeconds = 0;
  EstimateSource source = EstimateSource::Full;
  /// Wall time of this estimate (0 when it came from a memo), seconds.
  double wallSeconds = 0;
  /// Served from the estimator's memo (the same Cell asked again).
  bool memoised = false;
  /// Infeasible by the memory floor: every op at its least memory exceeds
  /// a device (no plan at all, not only none found).
  bool provedInfeasible = false;
};

} // namespace cell
} // namespace weft

#endif // WEFT_CELL_CELL_H
