//===- ExitCodes.h - Process exit codes shared by all Weft tools -*- C++
//-*-===//
//
// The exit codes of docs/Design.md §10; docs/ExitCodes.md is the user-facing
// copy.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_EXITCODES_H
#define WEFT_SUPPORT_EXITCODES_H

namespace weft {

enum ExitCode : int {
  /// The tool did what was asked.
  ExitSuccess = 0,
  /// Bad input: a file, model, spec or flag. One clear message was printed.
  ExitBadInput = 1,
  /// No feasible plan (memory) or a time limit was reached with no plan.
  ExitInfeasible = 2,
  /// Verification failed: two computations that must agree do not.
  ExitVerifyFailed = 3,
  /// Internal error: a bug in Weft.
  ExitInternal = 4,
};

} // namespace weft

#endif // WEFT_SUPPORT_EXITCODES_H
