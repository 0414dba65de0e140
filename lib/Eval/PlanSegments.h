//===- PlanSegments.h - Segment groups of an spmd plan ------------*- C++
//-*-===//
//
// Private to lib/Eval: the plan's segments tied into groups (one ratio vector
// per group), which groups the LP may move (those split on the node axis) and
// how a group's shares map to each member segment's sizes. Both
// ratioProblemFromPlan and applyRatios derive the same grouping from the plan.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_PLANSEGMENTS_H
#define WEFT_LIB_RATIO_PLANSEGMENTS_H

#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace weft {
namespace ratio {

/// Segments that must hold the same shares: tied by a local (a reshape from
/// batch to batch·seq keeps the shares, docs/Design.md §3.2).
struct SegmentGroup {
  /// Indices into PlanSegments::segments, ascending.
  llvm::SmallVector<unsigned, 2> members;
  /// The smallest member extent: the extent the group's integer sizes count.
  int64_t baseExtent = 1;
  /// extent(member) / baseExtent per member; 0 when not a whole multiple
  /// (integer sizes cannot be written then).
  llvm::SmallVector<int64_t, 2> factors;
  /// Alignment of the base sizes so that every member's sizes respect its
  /// own `align` (1 when it would not divide the base extent).
  int64_t alignment = 1;
  /// Split along the node axis somewhere: the LP chooses its ratios. Other
  /// groups (split on even local axes only) keep the plan's ratios and sizes.
  bool free = false;
};

struct PlanSegments {
  /// The module's spmd.segments, in order.
  llvm::SmallVector<spmd::SegmentAttr> segments;
  /// Segment id -> index into `segments`.
  llvm::DenseMap<int64_t, unsigned> indexOfId;
  /// Group of every segment index.
  std::vector<unsigned> groupOf;
  std::vector<SegmentGroup> groups;
  /// Problem segment (free group) of every group, -1 for fixed groups.
  std::vector<int> problemIndex;
  /// The group of every problem segment.
  std::vector<unsigned> freeGroups;
  /// Devices per mesh class (nodes of the class × devices per node).
  std::vector<unsigned> classCounts;

  /// The problem segment of segment `id`, or -1 (fixed or unknown).
  int problemSegmentOf(int64_t id) const {
    auto it = indexOfId.find(id);
    return it == indexOfId.end() ? -1 : problemIndex[groupOf[it->second]];
  }
};

/// Reads the mesh and segments of `plan` and ties them into groups. Errors
/// (bad input): no mesh, no function, a distribution naming an unknown
/// segment.
llvm::Expected<PlanSegments> analyzeSegments(mlir::ModuleOp plan);

/// The function of a plan the evaluator scores (`main`, else the only
/// defined one), or null.
mlir::Operation *planFunction(mlir::ModuleOp plan);

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_PLANSEGMENTS_H
