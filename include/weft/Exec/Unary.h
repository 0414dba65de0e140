//===- Unary.h - Elementwise unary kernels and clip --------------*- C++
//-*-===//

#ifndef WEFT_EXEC_UNARY_H
#define WEFT_EXEC_UNARY_H

#include "weft/Exec/Tensor.h"
#include <optional>

namespace weft::exec {

enum class UnaryKind {
  Sqrt,
  Rsqrt,
  Neg,
  Relu,
  Gelu,
  Tanh,
  Sigmoid,
  Erf,
  Exp,
  Log,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Floor,
  Ceil,
  Round
};

/// `f(x)` elementwise. Neg also accepts integers; the others need floats.
/// Gelu is the exact (erf) form x·Φ(x); Round takes halves to even.
Tensor unary(UnaryKind kind, const Tensor &x);
/// The gradient of the input given the input, the result and the result's
/// gradient. Relu passes no gradient at 0 (as PyTorch); Floor, Ceil and Round
/// pass none at all (piecewise constant).
Tensor unaryBackward(UnaryKind kind, const Tensor &x, const Tensor &y,
                     const Tensor &dy);

/// `min(max(x, lo), hi)`; either bound may be absent.
Tensor clip(const Tensor &x, std::optional<double> lo,
            std::optional<double> hi);
/// Passes the gradient where `lo ≤ x ≤ hi` (PyTorch's clamp convention).
Tensor clipBackward(const Tensor &x, std::optional<double> lo,
                    std::optional<double> hi, const Tensor &dy);

} // namespace weft::exec

#endif // WEFT_EXEC_UNARY_H
