//===- Pool.h - Max, average and global average pooling ---------*- C++ -*-===//

#ifndef WEFT_EXEC_POOL_H
#define WEFT_EXEC_POOL_H

#include "weft/Exec/Tensor.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace weft::exec {

/// A window over the spatial dims of an N×C×… input (2-d or 3-d; any
/// count works). Empty `kernel`, `strides` and `dilations` mean ones, empty
/// `pads` zeros.
struct PoolParams {
  llvm::SmallVector<int64_t, 3> kernel;
  llvm::SmallVector<int64_t, 3> strides;
  /// Before each spatial dim, then after each: [top, left, bottom, right].
  llvm::SmallVector<int64_t, 6> pads;
  llvm::SmallVector<int64_t, 3> dilations;
  /// Average pooling divides by the window's input positions, not the
  /// kernel's size.
  bool excludePad = false;
};

/// N×C×OH×OW of pooling an N×C×H×W input (N×C×OD×OH×OW in 3-d).
Shape poolOutputShape(llvm::ArrayRef<int64_t> inputShape,
                      const PoolParams &params);
/// Calls fn(out, in) for every input element (flat index `in`) of every
/// output's window (flat index `out`), windows in order; padding is skipped.
void forEachPoolWindowElement(llvm::ArrayRef<int64_t> inputShape,
                              const PoolParams &params,
                              llvm::function_ref<void(int64_t, int64_t)> fn);

/// Maximum of each window of the −∞-padded input.
Tensor maxPool(const Tensor &x, const PoolParams &params);
/// Routes each output's gradient to the first maximum of its window.
Tensor maxPoolBackward(const Tensor &x, const Tensor &dy,
                       const PoolParams &params);

/// Average of each window of the zero-padded input, padding included in
/// the count unless `excludePad`.
Tensor avgPool(const Tensor &x, const PoolParams &params);
Tensor avgPoolBackward(llvm::ArrayRef<int64_t> inputShape, const Tensor &dy,
                       const PoolParams &params);

/// N×C×… → N×C×1… (any number of spatial dims).
Tensor globalAvgPool(const Tensor &x);
Tensor globalAvgPoolBackward(llvm::ArrayRef<int64_t> inputShape,
                             const Tensor &dy);

} // namespace weft::exec

#endif // WEFT_EXEC_POOL_H
