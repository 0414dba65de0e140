//===- GradCheck.h - Kernel backward vs central differences -----*- C++ -*-===//
//
// The generic gradient check of the kernel tests: for a kernel y = f(x...)
// and its backward, compares the backward of L = Σ w ⊙ y (w random) with
// central differences of L in every element of every differentiable input.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_UNIT_EXEC_GRADCHECK_H
#define WEFT_TEST_UNIT_EXEC_GRADCHECK_H

#include "weft/Exec/Tensor.h"
#include "gtest/gtest.h"
#include <functional>
#include <vector>

namespace weft::exec::testing {

using ForwardFn = std::function<Tensor(const std::vector<Tensor> &)>;
/// Returns one gradient per input (invalid for non-differentiable inputs).
using BackwardFn = std::function<std::vector<Tensor>(
    const std::vector<Tensor> &, const Tensor &y, const Tensor &dy)>;

struct GradCheckOptions {
  double step = 1e-2;
  double rtol = 1e-2;
  double atol = 1e-3;
  uint64_t seed = 7;
};

/// Seeded N(0, scale²) values of `shape`.
Tensor randomTensor(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                    double scale = 1.0);

/// Fails the current test (naming input, element, backward and numeric
/// values) where the backward differs from central differences.
void expectGradientsMatch(const ForwardFn &forward, const BackwardFn &backward,
                          std::vector<Tensor> inputs,
                          const GradCheckOptions &options = {});

/// Expects `actual` to have `shape` and the given values (within tol).
void expectTensor(const Tensor &actual, llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<float> values, double tol = 1e-5);

} // namespace weft::exec::testing

#endif // WEFT_TEST_UNIT_EXEC_GRADCHECK_H
