//===- FuzzSupport.h - What the fuzz targets share ----------------*- C++
//-*-===//
//
// Every target feeds its bytes to one of Weft's readers and only asks that
// it returns (a value or an llvm::Error) without crashing, leaking or
// tripping a sanitizer; errors are consumed.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FUZZ_FUZZSUPPORT_H
#define WEFT_FUZZ_FUZZSUPPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace weft::fuzz {

inline llvm::StringRef textOf(const uint8_t *data, size_t size) {
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// Consumes the error of `value`, if any.
template <typename T> void drop(llvm::Expected<T> &value) {
  if (!value)
    llvm::consumeError(value.takeError());
}

/// A file under the repository's data/ or test inputs (WEFT_SOURCE_DIR).
inline std::string sourcePath(llvm::StringRef relative) {
  return std::string(WEFT_SOURCE_DIR) + "/" + relative.str();
}

/// Writes `data` to a file private to this process whose name ends in
/// `suffix` and returns its path (readers that take a path only).
std::string scratchFile(const uint8_t *data, size_t size,
                        llvm::StringRef suffix);

} // namespace weft::fuzz

#endif // WEFT_FUZZ_FUZZSUPPORT_H
