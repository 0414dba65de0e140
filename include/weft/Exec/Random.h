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
/// Standard normal (Box-Muller over the uniforms at 2·index and 2·index+1).
double standardNormal(uint64_t seed, uint64_t stream, uint64_t index);

} // namespace weft::exec

#endif // WEFT_EXEC_RANDOM_H
