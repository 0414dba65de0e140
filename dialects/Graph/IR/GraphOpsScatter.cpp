//===- GraphOpsScatter.cpp - Verifiers of scatter_elements and scatter_nd -===//

#include "Graph/IR/GraphOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace weft::graph;

static ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

static Type elementTypeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getElementType();
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, "x");
  os << "]";
  return os.str();
}

/// The reduction names and the element types both scatters share.
static LogicalResult verifyScatterCommon(Operation *op, StringRef reduction,
                                         Value data, Value updates) {
  static constexpr StringLiteral reductions[] = {"none", "add", "mul", "max",
                                                 "min"};
  if (!llvm::is_contained(reductions, reduction))
    return op->emitOpError() << "unknown reduction '" << reduction
                             << "' (expected none, add, mul, max or min)";
  if (elementTypeOf(data) != elementTypeOf(updates))
    return op->emitOpError()
           << "updates of element type " << elementTypeOf(updates)
           << " for data of " << elementTypeOf(data);
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(
          verifyScatterCommon(*this, getReduction(), getData(), getUpdates())))
    return failure();
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices()),
                    upd = shapeOf(getUpdates());
  int64_t rank = data.size(), axis = getAxis();
  if (rank == 0 || axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (idx != upd)
    return emitOpError() << "indices " << shapeString(idx) << " and updates "
                         << shapeString(upd) << " differ in shape";
  if (int64_t(idx.size()) != rank)
    return emitOpError() << "indices of rank " << idx.size()
                         << " for data of rank " << rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx[d] > data[d])
      return emitOpError() << "indices " << shapeString(idx) << " exceed data "
                           << shapeString(data) << " in dim " << d;
  return success();
}

LogicalResult ScatterNdOp::verify() {
  if (failed(
          verifyScatterCommon(*this, getReduction(), getData(), getUpdates())))
    return failure();
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices()),
                    upd = shapeOf(getUpdates());
  if (idx.empty())
    return emitOpError("expected indices of rank >= 1");
  int64_t k = idx.back();
  if (k < 1 || k > int64_t(data.size()))
    return emitOpError() << "index tuples of " << k
                         << " elements for data of rank " << data.size();
  SmallVector<int64_t> expected(idx.drop_back());
  expected.append(data.begin() + k, data.end());
  if (expected != upd)
    return emitOpError() << "expected updates of shape "
                         << shapeString(expected) << ", found "
                         << shapeString(upd);
  return success();
}
