//===- GradientCheck.h - Parameter gradients vs finite differences -*- C++
//-*-===//

#ifndef WEFT_EXEC_GRADIENTCHECK_H
#define WEFT_EXEC_GRADIENTCHECK_H

#include "weft/Exec/Interpreter.h"
#include <optional>

namespace weft::exec {

struct GradientCheckOptions {
  /// An element agrees when |analytic − numeric| ≤ atol + rtol·max(|a|, |n|).
  double rtol = 2e-2;
  double atol = 2e-4;
  /// Elements checked per parameter: the one with the largest gradient and
  /// the rest drawn at random (fewer for small parameters).
  unsigned elementsPerParameter = 3;
  /// Central-difference step relative to max(1, |w|).
  double step = 1e-3;
  uint64_t seed = 0;
};

struct GradientSample {
  std::string parameter;
  int64_t index = 0;
  /// The element's coordinates, "[3, 5]".
  std::string coordinates;
  double analytic = 0, numeric = 0;
};

struct GradientCheckResult {
  unsigned checked = 0;
  /// Elements skipped because the loss has a kink within the step (ReLU,
  /// max, clip): the one-sided differences disagree with each other.
  unsigned kinks = 0;
  unsigned parameters = 0;
  double maxAbsError = 0;
  /// The first sample that differs (in program order of the parameters).
  std::optional<GradientSample> mismatch;
};

/// Compares the interpreter's parameter gradients (from a backward pass on
/// `bindings`) with central differences of the loss. `bindings` is
/// perturbed and restored; the interpreter ends with a forward pass on the
/// original values.
llvm::Expected<GradientCheckResult>
checkGradients(GraphInterpreter &interpreter, Bindings &bindings,
               const GradientCheckOptions &options);

} // namespace weft::exec

#endif // WEFT_EXEC_GRADIENTCHECK_H
