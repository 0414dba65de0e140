//===- TestProblems.h - Builders for small ratio problems -------*- C++ -*-===//

#ifndef WEFT_TEST_UNIT_RATIO_TESTPROBLEMS_H
#define WEFT_TEST_UNIT_RATIO_TESTPROBLEMS_H

#include "weft/Ratio/RatioProblem.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"

namespace weft {
namespace ratio {
namespace test {

/// Problem with classes of the given device counts and one segment.
inline RatioProblem makeProblem(std::vector<unsigned> counts,
                                int64_t extent = 1 << 20,
                                int64_t alignment = 1) {
  RatioProblem p;
  for (unsigned c = 0; c < counts.size(); ++c)
    p.classes.push_back({"c" + std::to_string(c), counts[c]});
  p.segments.push_back({"s0", extent, alignment, std::nullopt});
  return p;
}

/// Appends a step with zero costs on every class and returns it.
inline Step &addStep(RatioProblem &p, double multiplicity = 1) {
  Step step;
  step.name = "k" + std::to_string(p.steps.size());
  step.multiplicity = multiplicity;
  step.perClass.resize(p.classes.size());
  p.steps.push_back(std::move(step));
  return p.steps.back();
}

/// constant + coef·B_{segment, cls}.
inline LinearCost linear(double constant, unsigned segment, unsigned cls,
                         double coef) {
  LinearCost cost;
  cost.constant = constant;
  cost.terms.push_back({segment, cls, coef});
  return cost;
}

/// The message of an error, consumed ("" for success).
inline std::string messageOf(llvm::Error err) {
  std::string message;
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) {
    message = e.message();
  });
  return message;
}

/// Consumes `err` and returns (exit code, message).
inline std::pair<int, std::string> codeAndMessage(llvm::Error err) {
  int code = 0;
  std::string message;
  llvm::handleAllErrors(
      std::move(err),
      [&](const WeftError &e) {
        code = e.getCode();
        message = e.getMessage();
      },
      [&](const llvm::ErrorInfoBase &e) {
        code = ExitInternal;
        message = e.message();
      });
  return {code, message};
}

} // namespace test
} // namespace ratio
} // namespace weft

#endif // WEFT_TEST_UNIT_RATIO_TESTPROBLEMS_H
