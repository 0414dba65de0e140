//===- Progress.h - A rate-limited progress line on stderr -------*- C++
//-*-===//

#ifndef WEFT_SUPPORT_PROGRESS_H
#define WEFT_SUPPORT_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include <chrono>
#include <string>

namespace weft {

/// Prints a single, overwritten status line on stderr for long work. Nothing
/// is printed during the first `delay` seconds, so short runs stay quiet, and
/// nothing at all when stderr is not a terminal unless `force` is set.
class Progress {
public:
  explicit Progress(std::string label, double delaySeconds = 1.0,
                    bool force = false);
  ~Progress();

  /// Updates the line (at most ~5 times a second).
  void update(llvm::StringRef status);
  /// Ends the line if one was printed.
  void done();
  /// Seconds since construction.
  double elapsedSeconds() const;

private:
  std::string label;
  double delaySeconds;
  bool enabled;
  bool printed = false;
  std::chrono::steady_clock::time_point start, lastPrint;
};

} // namespace weft

#endif // WEFT_SUPPORT_PROGRESS_H
