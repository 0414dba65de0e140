//===- Pool.h - Max, average and global average pooling ---------*- C++ -*-===//

#ifndef WEFT_EXEC_POOL_H
#define WEFT_EXEC_POOL_H

#include "weft/Exec/Tensor.h"
#include <array>

namespace weft::exec {

struct PoolParams {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  /// [top, left, bottom, right].
  std::array<int64_t, 4> pads{0, 0, 0, 0};
};

/// Maximum of each window of the −∞-padded N×C×H×W input.
Tensor maxPool(const Tensor &x, const PoolParams &params);
/// Routes each output's gradient to the first maximum of its window.
Tensor maxPoolBackward(const Tensor &x, const Tensor &dy,
                       const PoolParams &params);

/// Average of each window of the zero-padded input, padding included in
/// the count (the only form the importer accepts).
Tensor avgPool(const Tensor &x, const PoolParams &params);
Tensor avgPoolBackward(llvm::ArrayRef<int64_t> inputShape, const Tensor &dy,
                       const PoolParams &params);

/// N×C×H×W → N×C×1×1.
Tensor globalAvgPool(const Tensor &x);
Tensor globalAvgPoolBackward(llvm::ArrayRef<int64_t> inputShape,
                             const Tensor &dy);

} // namespace weft::exec

#endif // WEFT_EXEC_POOL_H
