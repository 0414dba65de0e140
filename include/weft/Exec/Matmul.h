//===- Matmul.h - Batched matrix product (Eigen) -----------------*- C++
//-*-===//

#ifndef WEFT_EXEC_MATMUL_H
#define WEFT_EXEC_MATMUL_H

#include "weft/Exec/Elementwise.h"
#include "weft/Exec/Tensor.h"

namespace weft::exec {

/// `result[..., m, n] = Σ_k lhs[..., m, k] · rhs[..., k, n]` with numpy
/// broadcasting of the batch dimensions; both operands have rank ≥ 2.
Tensor matmul(const Tensor &lhs, const Tensor &rhs);

/// Gradients of both operands, summed over broadcast batch dimensions.
BinaryGrads matmulBackward(const Tensor &lhs, const Tensor &rhs,
                           const Tensor &dResult);

} // namespace weft::exec

#endif // WEFT_EXEC_MATMUL_H
