//===- VectorMath.h - Vectorised helpers for long rows ----------*- C++ -*-===//
//
// Private to lib/Exec: exp over long rows (softmax over a vocabulary) is the
// hot loop of a language model's loss, so it goes through Eigen's packet
// math instead of scalar std::exp.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_VECTORMATH_H
#define WEFT_LIB_EXEC_VECTORMATH_H

#include <cstdint>

namespace weft::exec {

/// out[i] = exp(in[i] − shift); returns Σ out[i] accumulated in double.
double expShifted(const float *in, float *out, int64_t n, float shift);
/// The maximum of n ≥ 1 floats.
float maxOf(const float *in, int64_t n);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_VECTORMATH_H
