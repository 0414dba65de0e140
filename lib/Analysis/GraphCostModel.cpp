//===- GraphCostModel.cpp - Graph ops priced by the cost model ------------===//

#include "weft/Analysis/GraphCostModel.h"
#include "Graph/IR/GraphOps.h"

using namespace weft;
namespace g = weft::graph;

OpClass weft::toCostOpClass(g::OpClass c) {
  switch (c) {
  case g::OpClass::MatMul:
    return OpClass::Matmul;
  case g::OpClass::Conv:
    return OpClass::Conv;
  case g::OpClass::Reduction:
    return OpClass::Reduction;
  case g::OpClass::Gather:
    return OpClass::Gather;
  case g::OpClass::Elementwise:
    return OpClass::Elementwise;
  case g::OpClass::Free:
    return OpClass::DataMovement;
  }
  return OpClass::Elementwise;
}

OpCostTerms weft::costTermsOf(g::CostOpInterface op,
                              const g::ShardShapes &shapes, DType dtype) {
  g::OpCost cost = op.getCost(shapes);
  // The IR carries fp32 tensors; in mixed precision activations move in the
  // compute dtype.
  double scale = bytesPerElement(dtype) / 4.0;
  OpCostTerms terms;
  OpClass cls = toCostOpClass(cost.opClass);
  terms.forward = {cls, cost.forwardFlops, cost.forwardBytes * scale};
  terms.backward = {cls, cost.backwardFlops, cost.backwardBytes * scale};
  terms.keptBytes = cost.keptBytes * scale;
  return terms;
}

ComputeEstimate weft::estimateStepCompute(mlir::ModuleOp module,
                                          const DeviceType &type, DType dtype,
                                          const ProfileDB *db) {
  ComputeEstimate estimate;
  module.walk([&](g::CostOpInterface op) {
    OpCostTerms terms =
        costTermsOf(op, g::ShardShapes::of(op.getOperation()), dtype);
    if (terms.forward.flops == 0 && terms.forward.bytes == 0)
      return;
    OpTime fwd = opTime(type, dtype, terms.forward, db);
    OpTime bwd = opTime(type, dtype, terms.backward, db);
    estimate.seconds += fwd.seconds + bwd.seconds;
    ++estimate.timedOps;
    if (fwd.measured)
      ++estimate.measuredOps;
  });
  return estimate;
}
