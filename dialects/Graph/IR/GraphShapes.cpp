//===- GraphShapes.cpp - Shapes the cost interface is evaluated at --------===//

#include "Graph/IR/GraphCost.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace weft::graph;

int64_t TensorShape::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

TensorShape TensorShape::of(mlir::Type type) {
  TensorShape shape;
  auto tensor = type.dyn_cast<mlir::RankedTensorType>();
  if (!tensor)
    return shape;
  shape.dims.assign(tensor.getShape().begin(), tensor.getShape().end());
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  shape.elementBytes = std::max(1u, (bits + 7) / 8);
  return shape;
}

ShardShapes ShardShapes::of(mlir::Operation *op) {
  ShardShapes shapes;
  for (mlir::Type t : op->getOperandTypes())
    shapes.operands.push_back(TensorShape::of(t));
  for (mlir::Type t : op->getResultTypes())
    shapes.results.push_back(TensorShape::of(t));
  return shapes;
}
