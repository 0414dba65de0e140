//===- Random.h - Counter-based random numbers -------------------*- C++
//-*-===//
//
// Every random value is a pure function of (seed, stream, index), so a
// tensor's values do not depend on the order tensors are drawn in, and a
// shard can draw exactly the elements of the whole tensor it holds.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_RANDOM_H
#define WEFT_EXEC_RANDOM_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace weft::exec {

/// The splitmix64 finaliser: a bijective 64-bit mixer.
uint64_t mix64(uint64_t x);
/// A stream id from a name (FNV-1a, then mixed).
uint64_t streamOf(llvm::StringRef name);
/// A random 64-bit value for (seed, stream, index).
uint64_t randomBits(uint64_t seed, uint64_t stream, uint64_t index);
/// Uniform in [0, 1) with 53 random bits.
double uniform01(uint64_t seed, uint64_t stream, uint64_t index);
/// Standard normal. Box-Muller turns the uniforms at 2k and 2k + 1 into
/// the normals at indices 2k (cosine) and 2k + 1 (sine).
double standardNormal(uint64_t seed, uint64_t stream, uint64_t index);
/// out[i] = scale · standardNormal(seed, stream, i) for i < n, computing
/// each Box-Muller pair once.
void fillNormal(float *out, int64_t n, uint64_t seed, uint64_t stream,
                double scale);

} // namespace weft::exec

#endif // WEFT_EXEC_RANDOM_H
