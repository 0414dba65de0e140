//===- TensorParallel.h - Megatron roles of a model's matmuls -----*- C++
//-*-===//
//
// Finds, by graph structure, the weights Megatron-style tensor parallelism
// splits: in attention, the Q/K/V projections (traced back from the
// score matmul Q·Kᵀ and the context matmul P·V through reshape/transpose
// and the bias add) are split by columns and the output projection (traced
// forward from the context) by rows; in feed-forward blocks, a weight matmul
// followed through elementwise ops (bias, GELU, ReLU...) by another weight
// matmul is a column/row pair. Models without attention (MLP, VGG's
// classifier) thus get their consecutive weight matmuls paired.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_BASELINES_TENSORPARALLEL_H
#define WEFT_LIB_BASELINES_TENSORPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace weft::baselines {

struct TensorParallelRole {
  /// Split by columns (weight dim 1, bias dim 0) or by rows (weight dim 0).
  bool columns = true;
  /// Extent of the split dim.
  int64_t extent = 0;
  /// Shard sizes must be multiples of this (a head's width in attention).
  int64_t align = 1;
};

struct TensorParallelRoles {
  /// Attention heads (0: no attention found).
  int64_t heads = 0;
  /// Parameter name -> role.
  llvm::StringMap<TensorParallelRole> parameters;
  /// Split extents of the column/row pairs (for the degree of models
  /// without heads).
  llvm::SmallVector<int64_t> splitExtents;
};

TensorParallelRoles findTensorParallelRoles(mlir::func::FuncOp main);

} // namespace weft::baselines

#endif // WEFT_LIB_BASELINES_TENSORPARALLEL_H
