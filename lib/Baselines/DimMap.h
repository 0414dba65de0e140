//===- DimMap.h - Where each operand dim of a graph op goes -------*- C++
//-*-===//
//
// For layout propagation: each operand dim of a graph op either becomes a
// result dim (possibly rescaled by a reshape), is contracted (a split there
// leaves partial sums: matmul's K, a mean or sum over it), or must be whole
// (a softmax or normalised dim, a max, a convolution window...).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_BASELINES_DIMMAP_H
#define WEFT_LIB_BASELINES_DIMMAP_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace weft::baselines {

struct DimTarget {
  enum Kind { Whole, Result, Contract };
  Kind kind = Whole;
  /// The result dim (Result); the same dim of every result when the op has
  /// several.
  int64_t dim = -1;
  /// A reshape changes the split dim's extent by num/den.
  int64_t num = 1, den = 1;

  static DimTarget result(int64_t d, int64_t num = 1, int64_t den = 1) {
    return {Result, d, num, den};
  }
  static DimTarget contract() { return {Contract, -1, 1, 1}; }
  bool sameAs(const DimTarget &o) const {
    return kind == o.kind && dim == o.dim;
  }
};

/// [operand][dim] -> target.
using DimMap = llvm::SmallVector<llvm::SmallVector<DimTarget, 4>, 4>;

/// The dim map of a graph compute op.
DimMap mapDims(mlir::Operation *op);

} // namespace weft::baselines

#endif // WEFT_LIB_BASELINES_DIMMAP_H
