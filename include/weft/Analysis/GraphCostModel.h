//===- GraphCostModel.h - Graph ops priced by the cost model -----*- C++
//-*-===//
//
// The adapter between the graph dialect's CostOpInterface (work as FLOPs
// and bytes) and lib/Cost (time on a device type, roofline or measured).
// The spmd evaluator prices each device's shard through the same function.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ANALYSIS_GRAPHCOSTMODEL_H
#define WEFT_ANALYSIS_GRAPHCOSTMODEL_H

#include "Graph/IR/GraphInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "weft/Cost/OpCost.h"
#include "weft/Cost/ProfileDB.h"

namespace weft {

/// The cost model's op class for a graph op class.
OpClass toCostOpClass(graph::OpClass c);

/// The forward and backward work of `op` at `shapes`, with bytes rescaled
/// from the IR's element types to `dtype` for floating-point data (mixed
/// precision computes in `dtype`).
OpCostTerms costTermsOf(graph::CostOpInterface op,
                        const graph::ShardShapes &shapes, DType dtype);

/// The key a profile DB measures `op` at `shapes` under: the op's name
/// without "graph.", a space, each operand's dims in brackets, "->", each
/// result's dims ("matmul [64,256][256,1024]->[64,1024]"; a scalar is
/// "[]"). tools/weft-profile writes the same key for the emitted program's
/// `ops.<name>` call on those shards (docs/CostModel.md, "Profile DB").
std::string opKey(mlir::Operation *op, const graph::ShardShapes &shapes);

/// Compute time of a whole model's training step on one device.
struct ComputeEstimate {
  /// Forward + backward seconds (an estimate: roofline or profile DB).
  double seconds = 0;
  /// Ops that take time, and how many of them had measured figures.
  unsigned timedOps = 0, measuredOps = 0;
};

/// Prices every graph op of `module` on one device of `type`.
ComputeEstimate estimateStepCompute(mlir::ModuleOp module,
                                    const DeviceType &type, DType dtype,
                                    const ProfileDB *db);

} // namespace weft

#endif // WEFT_ANALYSIS_GRAPHCOSTMODEL_H
