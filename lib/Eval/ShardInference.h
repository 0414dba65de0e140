//===- ShardInference.h - Shard shapes inside a local recipe ------*- C++
//-*-===//
//
// Private to lib/Eval: the shard shape of an intermediate result inside an
// `spmd.local` region, for the evaluator (integer extents) and the ratio
// problem (extents as forms of the ratios) alike.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EVAL_SHARDINFERENCE_H
#define WEFT_LIB_EVAL_SHARDINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

namespace weft::eval {

/// Each dim of `result` takes the shard extent of an operand dim of the same
/// global extent at the same position counted from the right (exact for
/// elementwise and broadcasting ops); the global extent, `whole(extent)`,
/// otherwise.
template <typename Shape, typename Whole>
Shape inferShard(mlir::Value result,
                 const llvm::DenseMap<mlir::Value, Shape> &shapes,
                 Whole whole) {
  auto type = result.getType().cast<mlir::RankedTensorType>();
  Shape dims;
  for (int64_t e : type.getShape())
    dims.push_back(whole(e));
  int64_t rank = type.getRank();
  for (int64_t i = 0; i < rank; ++i)
    for (mlir::Value operand : result.getDefiningOp()->getOperands()) {
      auto it = shapes.find(operand);
      auto otype = operand.getType().dyn_cast<mlir::RankedTensorType>();
      if (it == shapes.end() || !otype)
        continue;
      int64_t j = otype.getRank() - rank + i;
      if (j >= 0 && otype.getDimSize(j) == type.getDimSize(i)) {
        dims[i] = it->second[j];
        break;
      }
    }
  return dims;
}

} // namespace weft::eval

#endif // WEFT_LIB_EVAL_SHARDINFERENCE_H
