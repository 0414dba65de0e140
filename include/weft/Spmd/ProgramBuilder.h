//===- ProgramBuilder.h - An spmd program from per-op rule variants -*- C++
//-*-===//
//
// Builds a verified `spmd` module from a graph program and a `PlanChoice`:
// the mesh, the segments, the distribution of every function argument and
// parameter (with its storage strategy), and for every non-leaf graph op
// one sharding-rule variant per mesh axis (docs/ShardingRules.md) plus the
// segment of that axis's splits. The builder derives each op's operand
// preconditions and result distributions from the variants, brings the
// operands there with `planRelayout` (include/weft/Spmd/Relayout.h), wraps
// the op alone in an `spmd.local` whose `variant` names the per-axis
// variants joined by ", " (in axis order), and all-reduces / all-gathers the
// returned values (the loss) to replicated.
//
// Leaves: graph.parameter and graph.buffer become spmd.parameter (by name);
// every other graph op, constants included, is a "plan op" and gets its own
// local, in program order.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_PROGRAMBUILDER_H
#define WEFT_SPMD_PROGRAMBUILDER_H

#include "Graph/IR/GraphInterfaces.h"
#include "Spmd/IR/SpmdAttrs.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Spmd/Duals.h"
#include "weft/Spmd/SegmentTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace weft {
/// "sha256:<hex>" of the graph module's printed form (the plan's
/// `spmd.fingerprint`).
std::string modelFingerprint(mlir::ModuleOp graph);
} // namespace weft

namespace weft::spmd {

/// How a parameter (or buffer) is stored and updated.
struct ParameterChoice {
  /// Null: replicated.
  DistAttr dist;
  ParamStrategy strategy = ParamStrategy::Replicated;
};

/// One plan op: a sharding variant per mesh axis.
struct OpChoice {
  /// One per mesh axis, in axis order; each one of the op's
  /// `getShardingVariants()`.
  llvm::SmallVector<graph::ShardingVariant, 3> variants;
  /// Per axis: the segment of the variant's first Gather layout (operands
  /// first, then results), whose extent is that dim's; the other Gathers of
  /// the variant get the segment with the same units per device
  /// (`SegmentTable::scaled`). -1 (or absent) when the variant has none.
  llvm::SmallVector<int64_t, 3> segments;
  /// Recompute the op's forward in the backward pass instead of keeping its
  /// saved tensors (the local's `recompute` attribute).
  bool recompute = false;
};

/// Everything a plan decides.
struct PlanChoice {
  MeshAttr mesh;
  /// Segment i has id i; sizes (integer, per device) required.
  std::vector<SegmentAttr> segments;
  /// Per function argument (null or absent: replicated).
  std::vector<DistAttr> arguments;
  /// By parameter / buffer name (absent: replicated; buffers get strategy
  /// `buffer` whatever is set).
  llvm::StringMap<ParameterChoice> parameters;
  /// One per plan op, in program order.
  std::vector<OpChoice> ops;
};

/// The distributions a choice implies for one op.
struct OpDists {
  llvm::SmallVector<DistAttr, 4> operands;
  llvm::SmallVector<DistAttr, 2> results;
};

/// The plan ops of `main`, in order (every op but graph.parameter,
/// graph.buffer and the terminator).
std::vector<mlir::Operation *> planOps(mlir::func::FuncOp main);

/// The sharding variants of `op` (empty when it has no rule interface).
llvm::SmallVector<graph::ShardingVariant, 8>
shardingVariantsOf(mlir::Operation *op);

/// The per-axis variant names joined by ", " (an `spmd.local`'s variant).
std::string variantString(const OpChoice &choice);

/// The operand preconditions and result distributions of `op` under
/// `choice`, adding scaled segments to `segments` as needed. Errors name the
/// problem (wrong variant count, unknown variant, misaligned segment...).
llvm::Expected<OpDists> deriveDists(mlir::Operation *op, const OpChoice &choice,
                                    SegmentTable &segments);

/// Chooses a plan op's variants knowing its operands' current
/// distributions; may add segments to the table.
using OpChooser = std::function<llvm::Expected<OpChoice>(
    mlir::Operation *op, llvm::ArrayRef<DistAttr> operands,
    SegmentTable &segments)>;

/// Builds the plan of `graph` (a graph module with @main) under `choice`.
/// Errors (exit code 1) for invalid choices: a wrong number of ops or
/// variants, an unknown variant, a precondition no relayout reaches
/// (e.g. a partial operand from a whole value), segments that do not fit.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildProgram(mlir::ModuleOp graph, const PlanChoice &choice);

/// The same, asking `chooser` for every plan op's choice in program order;
/// the chosen ops and the final segments are recorded in `choice`.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildProgram(mlir::ModuleOp graph, PlanChoice &choice,
             const OpChooser &chooser);

} // namespace weft::spmd

#endif // WEFT_SPMD_PROGRAMBUILDER_H
