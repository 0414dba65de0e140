//===- GradientCheck.cpp - Parameter gradients vs finite differences ------===//
//
// The forward pass is f32 but the loss op's value is read in double, so the
// loss is smooth to ~1e-9 relative; a step of 1e-3 keeps that noise near
// 1e-6 and the truncation error (step² · third derivative) far below the
// default tolerances. Piecewise-linear ops (ReLU, max, clip) put kinks
// within a step of some elements; there the one-sided differences disagree
// with each other; the check then retries with a step 8 times smaller and
// skips the element if they still disagree. A wrong gradient leaves the
// one-sided differences in agreement, so it is not skipped.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/GradientCheck.h"
#include "weft/Exec/Random.h"
#include <cmath>

using namespace weft;
using namespace weft::exec;

namespace {

std::string coordinatesOf(llvm::ArrayRef<int64_t> shape, int64_t index) {
  Shape coords(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  return shapeString(coords);
}

/// The elements of a parameter to check: the largest gradient first.
std::vector<int64_t> sampleElements(const Tensor &grad, llvm::StringRef name,
                                    const GradientCheckOptions &options) {
  int64_t n = grad.getNumElements();
  std::vector<int64_t> picks;
  if (n == 0)
    return picks;
  int64_t largest = 0;
  for (int64_t i = 1; i < n; ++i)
    if (std::fabs(grad.floats()[i]) > std::fabs(grad.floats()[largest]))
      largest = i;
  picks.push_back(largest);
  uint64_t stream = streamOf(("check:" + name).str());
  int64_t want = std::min<int64_t>(options.elementsPerParameter, n);
  // A bounded number of draws: small parameters may repeat indices.
  for (uint64_t k = 0; int64_t(picks.size()) < want &&
                       k < 16 * uint64_t(options.elementsPerParameter);
       ++k) {
    int64_t i = int64_t(uniform01(options.seed, stream, k) * double(n));
    if (std::find(picks.begin(), picks.end(), i) == picks.end())
      picks.push_back(i);
  }
  return picks;
}

} // namespace

llvm::Expected<GradientCheckResult>
weft::exec::checkGradients(GraphInterpreter &interpreter, Bindings &bindings,
                           const GradientCheckOptions &options) {
  // Copy: later forward passes do not touch the gradients, but keep the
  // check independent of the interpreter's state.
  llvm::StringMap<Tensor> grads = interpreter.getParameterGradients();
  GradientCheckResult result;
  // The program's order, so the first mismatch is the earliest parameter.
  std::vector<std::string> names = interpreter.getParameterNames();

  auto lossAt = [&](Tensor &param, int64_t i,
                    float value) -> llvm::Expected<double> {
    param.floats()[i] = value;
    if (auto err = interpreter.forward(bindings))
      return std::move(err);
    return interpreter.getLoss();
  };
  auto agree = [&](double a, double b) {
    return std::fabs(a - b) <=
           options.atol + options.rtol * std::max(std::fabs(a), std::fabs(b));
  };
  // The central difference at element i, or none at a kink.
  auto centralDifference =
      [&](Tensor &param, int64_t i,
          double base) -> llvm::Expected<std::optional<double>> {
    float w = param.floats()[i];
    for (double scale : {1.0, 1.0 / 8}) {
      double h = scale * options.step * std::max(1.0, std::fabs(double(w)));
      auto up = lossAt(param, i, float(w + h));
      if (!up)
        return up.takeError();
      auto down = lossAt(param, i, float(w - h));
      if (!down)
        return down.takeError();
      param.floats()[i] = w;
      // The steps actually taken after rounding to f32.
      double hUp = double(float(w + h)) - w, hDown = w - double(float(w - h));
      if (agree((*up - base) / hUp, (base - *down) / hDown))
        return std::optional<double>((*up - *down) / (hUp + hDown));
    }
    return std::optional<double>();
  };
  // The loss at the bindings as given (they may differ from the last run).
  if (auto err = interpreter.forward(bindings))
    return std::move(err);
  double base = interpreter.getLoss();
  for (const std::string &name : names) {
    auto it = bindings.parameters.find(name);
    if (it == bindings.parameters.end() || !grads.count(name))
      continue;
    Tensor &param = it->second;
    const Tensor &grad = grads[name];
    ++result.parameters;
    for (int64_t i : sampleElements(grad, name, options)) {
      auto numeric = centralDifference(param, i, base);
      if (!numeric)
        return numeric.takeError();
      if (!*numeric) {
        ++result.kinks;
        continue;
      }
      double analytic = grad.floats()[i];
      double err = std::fabs(analytic - **numeric);
      ++result.checked;
      result.maxAbsError = std::max(result.maxAbsError, err);
      if (!agree(analytic, **numeric) && !result.mismatch)
        result.mismatch = GradientSample{
            name, i, coordinatesOf(param.getShape(), i), analytic, **numeric};
    }
  }
  if (auto err = interpreter.forward(bindings))
    return std::move(err);
  return result;
}
