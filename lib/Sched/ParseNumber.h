//===- ParseNumber.h - Finite numbers from text -----------------*- C++ -*-===//

#ifndef WEFT_LIB_SCHED_PARSENUMBER_H
#define WEFT_LIB_SCHED_PARSENUMBER_H

#include "llvm/ADT/StringRef.h"
#include <cmath>

namespace weft {
namespace sched {

/// Like StringRef::getAsDouble (true on error), but "inf", "nan" and
/// overflowing literals are errors too: a trace must not smuggle infinite
/// work or times into the simulator.
inline bool parseFinite(llvm::StringRef text, double &out) {
  double value = 0;
  if (text.trim().getAsDouble(value) || !std::isfinite(value))
    return true;
  out = value;
  return false;
}

} // namespace sched
} // namespace weft

#endif // WEFT_LIB_SCHED_PARSENUMBER_H
