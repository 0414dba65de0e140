//===- Reduce.h - Sum, mean and max over axes --------------------*- C++
//-*-===//

#ifndef WEFT_EXEC_REDUCE_H
#define WEFT_EXEC_REDUCE_H

#include "weft/Exec/Tensor.h"

namespace weft::exec {

enum class ReduceKind { Sum, Mean, Max };

/// Reduces over `axes` (non-negative, sorted), keeping them as size-1
/// dimensions when `keepDims`. Accumulates in double.
Tensor reduce(ReduceKind kind, const Tensor &x, llvm::ArrayRef<int64_t> axes,
              bool keepDims);
/// The input's gradient. Max splits the gradient evenly among tied maxima
/// (as PyTorch's amax).
Tensor reduceBackward(ReduceKind kind, const Tensor &x, const Tensor &y,
                      const Tensor &dy, llvm::ArrayRef<int64_t> axes);

} // namespace weft::exec

#endif // WEFT_EXEC_REDUCE_H
