//===- RatioProblem.h - The sharding-ratio problem, IR-free ------*- C++
//-*-===//
//
// The input of the ratio LP (docs/Design.md §5) written without any IR: device
// classes, nodes (for NIC rows), segments and steps whose costs are linear or
// convex piecewise-linear in the ratios B_{s,c} (the share of segment s that
// ONE device of class c holds). docs/Ratios.md writes the LP out.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_RATIOPROBLEM_H
#define WEFT_RATIO_RATIOPROBLEM_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace weft {
namespace ratio {

/// Ratios indexed [segment][class]: the share of the segment held by one
/// device of the class. A segment's shares satisfy Σ_c count_c·B_{s,c} = 1.
using Ratios = std::vector<std::vector<double>>;

/// A set of interchangeable devices (same type, node shape and links).
struct DeviceClass {
  std::string name;
  /// Devices in the class; a class ratio counts once per device.
  unsigned count = 1;
  /// Memory per device in bytes (infinite: no memory row).
  double memoryCapacity = std::numeric_limits<double>::infinity();
};

/// A node, only needed for NIC-load terms: which devices share one NIC.
struct Node {
  std::string name;
  /// (class, number of devices of that class in this node).
  llvm::SmallVector<std::pair<unsigned, unsigned>, 2> devices;
  /// NIC bandwidth in bytes/s.
  double nicBandwidth = 0;
};

/// A class of (tensor, dim) pairs split with one ratio vector (§3.2).
struct Segment {
  std::string name;
  /// Global extent of the split dimension (elements).
  int64_t extent = 1;
  /// Every shard size must be a multiple of this (reshape rule, §3.3).
  int64_t alignment = 1;
  /// Ratios fixed by the caller, one per class; absent: chosen by the LP.
  std::optional<std::vector<double>> fixedRatios;
};

/// coef · B_{segment, deviceClass}.
struct RatioTerm {
  unsigned segment = 0;
  unsigned deviceClass = 0;
  double coef = 0;
};

/// constant + Σ coef·B (seconds in steps, bytes in memory rows).
struct LinearCost {
  double constant = 0;
  llvm::SmallVector<RatioTerm, 4> terms;
};

/// scale · max over pieces. Convex when scale ≥ 0 (enforced by check()); the
/// LP models it with an epigraph variable. Roofline maxima and padded
/// all-gathers are of this form.
struct MaxCost {
  double scale = 1;
  llvm::SmallVector<LinearCost, 2> pieces;
};

/// NIC load of a collective: each node receives (1 − Σ_{i∈node} B_{s,i})·bytes
/// over its NIC; a device's row carries the load of its own node.
struct NicLoad {
  unsigned segment = 0;
  double bytes = 0;
};

/// The cost of one step on one device class.
struct StepClassCost {
  /// Compute seconds: linear, constants included.
  LinearCost compute;
  /// Convex pieces added to compute (roofline maxima).
  llvm::SmallVector<MaxCost, 0> computeMax;
  /// Communication seconds: linear terms (may name other classes' ratios).
  LinearCost comm;
  /// Convex pieces added to communication (padded all-gather, linearised
  /// all-to-all).
  llvm::SmallVector<MaxCost, 0> commMax;
  /// NIC loads added to communication, evaluated per node holding the class.
  llvm::SmallVector<NicLoad, 0> nicLoads;
};

/// One step of the program (§4): an op's variant plus its collectives.
struct Step {
  std::string name;
  /// How often the step occurs (memoised blocks enter with their count).
  double multiplicity = 1;
  /// One entry per device class.
  std::vector<StepClassCost> perClass;
};

/// The whole problem. Objective: Σ_k mult_k·(max_c compute_{k,c} +
/// max_c comm_{k,c}); rows: Σ_c count_c·B_{s,c} = 1, memory_c(B) ≤ capacity_c.
struct RatioProblem {
  std::vector<DeviceClass> classes;
  std::vector<Node> nodes;
  std::vector<Segment> segments;
  std::vector<Step> steps;
  /// Bytes per device of each class as a function of the ratios; empty, or
  /// one entry per class.
  std::vector<LinearCost> memory;
  /// Some costs are first-order expansions around the ratios the problem was
  /// built at (ratioProblemFromPlan): solve inside a trust region.
  bool linearized = false;
  /// The step time in seconds is objectiveScale × the objective (gradient
  /// accumulation over m micro-batches: the objective is per micro-batch
  /// and objectiveScale is m).
  double objectiveScale = 1;

  /// Rejects malformed problems (bad indices, non-finite numbers, negative
  /// scales of max terms, ratios that cannot sum to one, ...) with a bad-input
  /// error naming the offending item.
  llvm::Error check() const;

  unsigned numDevices() const;
  /// The nodes holding devices of class `c` (all of them; empty without
  /// nodes).
  llvm::SmallVector<unsigned, 2> nodesOfClass(unsigned c) const;
  /// Per class, nodesOfClass(c) keeping the first node of each shape (its
  /// (class, devices) list in order and its NIC bandwidth, bit for bit):
  /// nodes of one shape give identical NIC rows and times, so a cluster of
  /// thousands of nodes of a few shapes prices a few nodes per class.
  std::vector<llvm::SmallVector<unsigned, 2>> distinctNodesByClass() const;
};

/// The padded all-gather of §5: every device receives (n − 1)·max_j B_{s,j}·L
/// bytes at `bandwidth` bytes/s (n = all devices).
MaxCost paddedAllGather(const RatioProblem &problem, unsigned segment,
                        double bytes, double bandwidth);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_RATIOPROBLEM_H
