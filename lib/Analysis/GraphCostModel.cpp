//===- GraphCostModel.cpp - Graph ops priced by the cost model ------------===//

#include "weft/Analysis/GraphCostModel.h"
#include "Graph/IR/GraphOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

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
  terms.forward.key = opKey(op.getOperation(), shapes);
  terms.backward.key = terms.forward.key;
  terms.backward.backward = true;
  return terms;
}

std::string weft::opKey(mlir::Operation *op, const g::ShardShapes &shapes) {
  std::string key;
  llvm::raw_string_ostream os(key);
  llvm::StringRef name = op->getName().getStringRef();
  name.consume_front("graph.");
  os << name << ' ';
  auto print = [&](const g::TensorShape &t) {
    os << '[';
    llvm::interleave(t.dims, os, ",");
    os << ']';
  };
  llvm::for_each(shapes.operands, print);
  os << "->";
  llvm::for_each(shapes.results, print);
  return key;
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
