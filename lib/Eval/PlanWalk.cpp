//===- PlanWalk.cpp - Helpers of the one plan walk ------------------------===//

#include "weft/Eval/PlanWalk.h"

using namespace weft;

CollectiveVariant eval::variantOf(mlir::Operation *op) {
  CollectiveVariant variant;
  if (auto mode = op->getAttrOfType<mlir::StringAttr>("mode"))
    variant.uneven = mode.getValue() == "grouped" ? UnevenVariant::Grouped
                                                  : UnevenVariant::Padded;
  if (auto algo = op->getAttrOfType<mlir::StringAttr>("algorithm"))
    variant.algo = algo.getValue() == "hierarchical"
                       ? AllReduceAlgo::Hierarchical
                       : AllReduceAlgo::Ring;
  return variant;
}

double eval::elementBytes(mlir::RankedTensorType type, DType dtype) {
  if (type.getElementType().isa<mlir::FloatType>())
    return bytesPerElement(dtype);
  return std::max(1u, type.getElementTypeBitWidth() / 8);
}
