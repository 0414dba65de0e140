//===- Units.h - Printing quantities with their units ------------*- C++
//-*-===//
//
// Every number a tool prints has a unit (docs/Design.md, conventions). These
// format a value with a decimal SI prefix and three significant digits.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_UNITS_H
#define WEFT_SUPPORT_UNITS_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace weft {

/// `value` with an SI prefix and `unit`: formatSI(1.5e12, "FLOP") is
/// "1.50 TFLOP".
std::string formatSI(double value, llvm::StringRef unit);
/// Bytes with decimal prefixes: "440 MB".
std::string formatBytes(double bytes);
/// Seconds in s, ms or us.
std::string formatSeconds(double seconds);

} // namespace weft

#endif // WEFT_SUPPORT_UNITS_H
