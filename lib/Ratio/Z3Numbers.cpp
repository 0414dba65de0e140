//===- Z3Numbers.cpp - Doubles as exact Z3 rationals ----------------------===//

#include "Z3Numbers.h"
#include <cmath>
#include <cstdint>

using namespace weft;
using namespace weft::ratio;

/// Decimal digits of m·2^k for m < 2^63, k ≥ 0 (little schoolbook doubling).
static std::string timesPowerOfTwo(uint64_t m, int k) {
  std::string digits = std::to_string(m); // most significant first
  for (int i = 0; i < k; ++i) {
    int carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      int d = (*it - '0') * 2 + carry;
      *it = char('0' + d % 10);
      carry = d / 10;
    }
    if (carry)
      digits.insert(digits.begin(), char('0' + carry));
  }
  return digits;
}

std::string weft::ratio::exactRational(double value) {
  if (value == 0)
    return "0";
  bool negative = value < 0;
  int exponent = 0;
  double mantissa = std::frexp(std::abs(value), &exponent);
  // |value| = m·2^(exponent − 53) with m a 53-bit integer.
  uint64_t m = uint64_t(std::ldexp(mantissa, 53));
  int shift = exponent - 53;
  while (shift < 0 && (m & 1) == 0) {
    m >>= 1;
    ++shift;
  }
  std::string text = negative ? "-" : "";
  if (shift >= 0)
    return text + timesPowerOfTwo(m, shift);
  return text + std::to_string(m) + "/" + timesPowerOfTwo(1, -shift);
}

z3::expr weft::ratio::exactReal(z3::context &ctx, double value) {
  return ctx.real_val(exactRational(value).c_str());
}
