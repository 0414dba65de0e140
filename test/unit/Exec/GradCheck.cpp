//===- GradCheck.cpp - Kernel backward vs central differences -------------===//

#include "GradCheck.h"
#include "weft/Exec/Random.h"
#include <cmath>

using namespace weft::exec;

Tensor weft::exec::testing::randomTensor(llvm::ArrayRef<int64_t> shape,
                                         uint64_t seed, double scale) {
  Tensor t(ElementType::F32, shape);
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    t.floats()[i] = float(scale * standardNormal(seed, 99, i));
  return t;
}

static double weightedSum(const Tensor &y, const Tensor &w) {
  double s = 0;
  for (int64_t i = 0; i < y.getNumElements(); ++i)
    s += double(y.floats()[i]) * w.floats()[i];
  return s;
}

void weft::exec::testing::expectGradientsMatch(
    const ForwardFn &forward, const BackwardFn &backward,
    std::vector<Tensor> inputs, const GradCheckOptions &options) {
  Tensor y = forward(inputs);
  ASSERT_TRUE(y.isValid());
  Tensor w = randomTensor(y.getShape(), options.seed + 1000);
  std::vector<Tensor> grads = backward(inputs, y, w);
  ASSERT_EQ(grads.size(), inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!grads[k].isValid())
      continue;
    ASSERT_EQ(grads[k].getShape(), inputs[k].getShape()) << "input " << k;
    for (int64_t i = 0; i < inputs[k].getNumElements(); ++i) {
      float x = inputs[k].floats()[i];
      inputs[k].floats()[i] = float(x + options.step);
      double up = weightedSum(forward(inputs), w);
      inputs[k].floats()[i] = float(x - options.step);
      double down = weightedSum(forward(inputs), w);
      inputs[k].floats()[i] = x;
      double numeric = (up - down) / (2 * options.step);
      double analytic = grads[k].floats()[i];
      double tol = options.atol + options.rtol * std::fabs(numeric);
      EXPECT_NEAR(analytic, numeric, tol) << "input " << k << " element " << i;
    }
  }
}

void weft::exec::testing::expectTensor(const Tensor &actual,
                                       llvm::ArrayRef<int64_t> shape,
                                       llvm::ArrayRef<float> values,
                                       double tol) {
  ASSERT_TRUE(actual.isValid());
  ASSERT_EQ(actual.getShape(), shape) << shapeString(actual.getShape());
  ASSERT_EQ(actual.getNumElements(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(actual.at(i), values[i], tol) << "element " << i;
}
