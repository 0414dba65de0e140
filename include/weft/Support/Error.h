//===- Error.h - Error helpers for Weft's plain libraries --------*- C++
//-*-===//
//
// Plain libraries report failures as llvm::Error values carrying an exit code
// (bad input vs. infeasible vs. internal); tools print them as one line and
// exit with that code.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_ERROR_H
#define WEFT_SUPPORT_ERROR_H

#include "weft/Support/ExitCodes.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft {

/// An error with a one-line message and the exit code a tool should use.
class WeftError : public llvm::ErrorInfo<WeftError> {
public:
  static char ID;
  WeftError(ExitCode code, std::string message, bool memory = false,
            double overflow = 0)
      : code(code), message(std::move(message)), memory(memory),
        overflow(overflow) {}

  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  ExitCode getCode() const { return code; }
  const std::string &getMessage() const { return message; }
  /// No plan fits device memory (exit 2): a smaller batch per step, e.g.
  /// gradient accumulation, may fit.
  bool isMemoryShortfall() const { return memory; }
  /// Of a memory shortfall: the memory needed over the capacity of the
  /// device short of it (> 1), or 0 when not known.
  double getOverflow() const { return overflow; }

private:
  ExitCode code;
  std::string message;
  bool memory;
  double overflow;
};

/// Builds an error for bad user input (exit code 1).
template <typename... Ts> llvm::Error badInput(const char *fmt, Ts &&...vals) {
  return llvm::make_error<WeftError>(
      ExitBadInput, llvm::formatv(fmt, std::forward<Ts>(vals)...).str());
}

/// Builds an error with an explicit exit code.
template <typename... Ts>
llvm::Error makeError(ExitCode code, const char *fmt, Ts &&...vals) {
  return llvm::make_error<WeftError>(
      code, llvm::formatv(fmt, std::forward<Ts>(vals)...).str());
}

/// Builds a "no plan fits device memory" error (exit code 2); `overflow`
/// is the memory needed over the capacity (0: not known).
template <typename... Ts>
llvm::Error memoryError(double overflow, const char *fmt, Ts &&...vals) {
  return llvm::make_error<WeftError>(
      ExitInfeasible, llvm::formatv(fmt, std::forward<Ts>(vals)...).str(),
      /*memory=*/true, overflow);
}

/// Whether `err` is a memory shortfall (memoryError), and then its
/// overflow in `overflow` and its message in `message` when given; `err`
/// keeps its payload.
bool isMemoryShortfall(llvm::Error &err, double *overflow = nullptr,
                       std::string *message = nullptr);

/// Prints `tool: error: <message>` to stderr and returns the exit code the
/// error carries (ExitInternal for errors that are not WeftErrors).
int reportError(llvm::StringRef tool, llvm::Error err);

} // namespace weft

#endif // WEFT_SUPPORT_ERROR_H
