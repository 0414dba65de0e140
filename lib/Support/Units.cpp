//===- Units.cpp - Printing quantities with their units -------------------===//

#include "weft/Support/Units.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace weft;

std::string weft::formatSI(double value, llvm::StringRef unit) {
  static const char *prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  double v = value;
  while (std::fabs(v) >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  const char *fmt = std::fabs(v) >= 100  ? "{0:F0} {1}{2}"
                    : std::fabs(v) >= 10 ? "{0:F1} {1}{2}"
                                         : "{0:F2} {1}{2}";
  if (i == 0 && v == std::floor(v))
    fmt = "{0:F0} {1}{2}";
  std::string text = llvm::formatv(fmt, v, prefixes[i], unit).str();
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

std::string weft::formatBytes(double bytes) { return formatSI(bytes, "B"); }

std::string weft::formatSeconds(double seconds) {
  if (seconds >= 1 || seconds == 0)
    return llvm::formatv("{0:F3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} us", seconds * 1e6).str();
}
