//===- Random.cpp - Counter-based random numbers --------------------------===//

#include "weft/Exec/Random.h"
#include <cmath>

using namespace weft::exec;

uint64_t weft::exec::mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t weft::exec::streamOf(llvm::StringRef name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return mix64(h);
}

uint64_t weft::exec::randomBits(uint64_t seed, uint64_t stream,
                                uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) + index);
}

double weft::exec::uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  return double(randomBits(seed, stream, index) >> 11) * 0x1.0p-53;
}

double weft::exec::standardNormal(uint64_t seed, uint64_t stream,
                                  uint64_t index) {
  // 1 − u keeps the logarithm's argument in (0, 1].
  double u1 = 1.0 - uniform01(seed, stream, 2 * index);
  double u2 = uniform01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}
