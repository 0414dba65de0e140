//===- Z3Numbers.h - Doubles as exact Z3 rationals --------------*- C++ -*-===//
//
// Private to lib/Ratio (the only files that include z3++.h are the two that
// build Z3 models). A double is m·2^e exactly; Z3 gets that rational.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_RATIO_Z3NUMBERS_H
#define WEFT_LIB_RATIO_Z3NUMBERS_H

#include <string>
#include <z3++.h>

namespace weft {
namespace ratio {

/// The exact rational value of a finite double as a Z3 real numeral.
z3::expr exactReal(z3::context &ctx, double value);

/// The exact rational value of a finite double as "p/q" (decimal).
std::string exactRational(double value);

} // namespace ratio
} // namespace weft

#endif // WEFT_LIB_RATIO_Z3NUMBERS_H
