//===- Baselines.h - Hand-written plans to compare against --------*- C++
//-*-===//
//
// The baselines of docs/Design.md §2 as `spmd` programs, built from a graph
// program and a cluster and scored by the same evaluator as synthesized
// plans (docs/Evaluator.md, "Baselines"):
//
//  - DP-EV: data parallel, the batch split evenly over every device;
//  - DP-CP: data parallel, the batch split in proportion to device peak
//    FLOP/s (HAP's "compute-proportional" baseline);
//  - TP-DP: Megatron tensor parallelism of degree t = gcd(heads, devices per
//    node) on the inner factor of the local axis (column-split Q/K/V and
//    FFN-in weights, row-split output projections followed by an
//    all-reduce), data parallel (even split) over the node axis and the
//    outer local factor.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_BASELINES_BASELINES_H
#define WEFT_BASELINES_BASELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/Error.h"
#include <string>

namespace weft {

enum class BaselineKind { DPEven, DPCompute, TPDP };

/// All baselines, in report order.
llvm::ArrayRef<BaselineKind> allBaselines();

/// "DP-EV", "DP-CP", "TP-DP".
llvm::StringRef baselineName(BaselineKind kind);

/// A built baseline.
struct BaselinePlan {
  BaselineKind kind;
  /// One line: what the plan does ("data parallel, batch ∝ peak FLOP/s").
  std::string strategy;
  mlir::OwningOpRef<mlir::ModuleOp> plan;
};

/// Builds `kind` for `graph` (an imported graph module with @main) on
/// `spec`. The mesh has one class per cluster device class and `local = [k]`
/// with k the gcd of the nodes' device counts: a node of c devices becomes
/// c/k mesh nodes (of the same class), so nodes of different sizes use every
/// device (TP-DP: `local = [k / t, t]`). The plan verifies.
llvm::Expected<BaselinePlan> buildBaseline(BaselineKind kind,
                                           mlir::ModuleOp graph,
                                           const ClusterSpec &spec,
                                           DType dtype);

/// "sha256:<hex>" of the graph module's printed form.
std::string modelFingerprint(mlir::ModuleOp graph);

} // namespace weft

#endif // WEFT_BASELINES_BASELINES_H
