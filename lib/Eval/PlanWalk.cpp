//===- PlanWalk.cpp - Helpers of the one plan walk ------------------------===//

#include "weft/Eval/PlanWalk.h"
#include "Spmd/IR/SpmdOps.h"

using namespace weft;

CollectiveVariant eval::variantOf(mlir::Operation *op) {
  CollectiveVariant variant;
  if (auto gather = llvm::dyn_cast<spmd::AllGatherOp>(op))
    variant.uneven = gather.getMode() == spmd::GatherMode::Grouped
                         ? UnevenVariant::Grouped
                         : UnevenVariant::Padded;
  if (auto reduce = llvm::dyn_cast<spmd::AllReduceOp>(op)) {
    switch (reduce.getAlgorithm()) {
    case spmd::AllReduceAlgorithm::Ring:
      variant.algo = AllReduceAlgo::Ring;
      break;
    case spmd::AllReduceAlgorithm::Hierarchical:
      variant.algo = AllReduceAlgo::Hierarchical;
      break;
    case spmd::AllReduceAlgorithm::Tree:
      variant.algo = AllReduceAlgo::Tree;
      break;
    }
  }
  return variant;
}

double eval::elementBytes(mlir::RankedTensorType type, DType dtype) {
  if (type.getElementType().isa<mlir::FloatType>())
    return bytesPerElement(dtype);
  return std::max(1u, type.getElementTypeBitWidth() / 8);
}
