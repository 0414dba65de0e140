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

/// The Box-Muller pair of normals at indices 2k and 2k + 1.
static std::pair<double, double> normalPair(uint64_t seed, uint64_t stream,
                                            uint64_t k) {
  // 1 − u keeps the logarithm's argument in (0, 1].
  double u1 = 1.0 - uniform01(seed, stream, 2 * k);
  double u2 = uniform01(seed, stream, 2 * k + 1);
  double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * M_PI * u2;
  return {r * std::cos(theta), r * std::sin(theta)};
}

double weft::exec::standardNormal(uint64_t seed, uint64_t stream,
                                  uint64_t index) {
  auto [even, odd] = normalPair(seed, stream, index / 2);
  return index % 2 ? odd : even;
}

void weft::exec::fillNormal(float *out, int64_t n, uint64_t seed,
                            uint64_t stream, double scale) {
  for (int64_t i = 0; i < n; i += 2) {
    auto [even, odd] = normalPair(seed, stream, uint64_t(i) / 2);
    out[i] = float(scale * even);
    if (i + 1 < n)
      out[i + 1] = float(scale * odd);
  }
}
