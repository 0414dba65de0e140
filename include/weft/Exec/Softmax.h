//===- Softmax.h - Softmax and log-softmax along one axis -------*- C++ -*-===//

#ifndef WEFT_EXEC_SOFTMAX_H
#define WEFT_EXEC_SOFTMAX_H

#include "weft/Exec/Tensor.h"

namespace weft::exec {

/// Softmax of `x` along `axis` (non-negative), stabilised by the maximum.
Tensor softmax(const Tensor &x, int64_t axis);
/// dx = y ⊙ (dy − Σ_axis y ⊙ dy), from the result y.
Tensor softmaxBackward(const Tensor &y, const Tensor &dy, int64_t axis);

Tensor logSoftmax(const Tensor &x, int64_t axis);
/// dx = dy − softmax(x) · Σ_axis dy, from the result y = log softmax(x).
Tensor logSoftmaxBackward(const Tensor &y, const Tensor &dy, int64_t axis);

} // namespace weft::exec

#endif // WEFT_EXEC_SOFTMAX_H
