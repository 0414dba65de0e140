//===- Loss.cpp - Cross-entropy and negative log-likelihood ---------------===//
//
// Logits are viewed as N × C × inner (inner = product of the trailing
// dimensions); class c of position (n, k) is at (n·C + c)·inner + k.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/Loss.h"
#include "VectorMath.h"
#include "llvm/ADT/StringSwitch.h"
#include <cmath>
#include <vector>

using namespace weft::exec;

std::optional<LossReduction>
weft::exec::parseLossReduction(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<LossReduction>>(name)
      .Case("mean", LossReduction::Mean)
      .Case("sum", LossReduction::Sum)
      .Default(std::nullopt);
}

namespace {

struct ClassView {
  int64_t n, c, inner;
  int64_t at(int64_t ni, int64_t ci, int64_t k) const {
    return (ni * c + ci) * inner + k;
  }
};

ClassView viewOf(llvm::ArrayRef<int64_t> shape) {
  return {shape[0], shape[1], numElementsOf(shape.drop_front(2))};
}

bool ignored(const LossParams &p, int64_t label) {
  return p.ignoreIndex && label == *p.ignoreIndex;
}

/// 1 / (number of counted labels) for a mean, 1 for a sum.
double reductionScale(const Tensor &labels, const LossParams &p) {
  if (p.reduction == LossReduction::Sum)
    return 1.0;
  int64_t counted = 0;
  for (int64_t l : labels.intValues())
    counted += !ignored(p, l);
  return counted ? 1.0 / double(counted) : NAN;
}

/// Calls fn(rowBase, stride, label index into labels) per position.
template <typename Fn>
void forEachPosition(const ClassView &v, const Tensor &labels,
                     const LossParams &p, Fn fn) {
  for (int64_t ni = 0; ni < v.n; ++ni)
    for (int64_t k = 0; k < v.inner; ++k) {
      int64_t label = labels.ints()[ni * v.inner + k];
      if (!ignored(p, label))
        fn(v.at(ni, 0, k), label);
    }
}

/// Log-sum-exp of the C logits at base, base + inner, ...; `scratch` is
/// working space for contiguous rows.
double logSumExp(const float *x, int64_t base, const ClassView &v,
                 std::vector<float> &scratch) {
  if (v.inner == 1) {
    float m = maxOf(x + base, v.c);
    if (std::isinf(m))
      m = 0;
    scratch.resize(v.c);
    return m + std::log(expShifted(x + base, scratch.data(), v.c, m));
  }
  double m = -INFINITY;
  for (int64_t c = 0; c < v.c; ++c)
    m = std::max<double>(m, x[base + c * v.inner]);
  if (std::isinf(m))
    m = 0;
  double sum = 0;
  for (int64_t c = 0; c < v.c; ++c)
    sum += std::exp(x[base + c * v.inner] - m);
  return m + std::log(sum);
}

} // namespace

Tensor weft::exec::crossEntropy(const Tensor &logits, const Tensor &labels,
                                const LossParams &params) {
  return Tensor::scalar(float(crossEntropyValue(logits, labels, params)));
}

double weft::exec::crossEntropyValue(const Tensor &logits, const Tensor &labels,
                                     const LossParams &params) {
  ClassView v = viewOf(logits.getShape());
  std::vector<float> scratch;
  double total = 0;
  const float *x = logits.floats();
  forEachPosition(v, labels, params, [&](int64_t base, int64_t label) {
    total += logSumExp(x, base, v, scratch) - x[base + label * v.inner];
  });
  return total * reductionScale(labels, params);
}

Tensor weft::exec::crossEntropyBackward(const Tensor &logits,
                                        const Tensor &labels, float dLoss,
                                        const LossParams &params) {
  ClassView v = viewOf(logits.getShape());
  Tensor dx(ElementType::F32, logits.getShape());
  double scale = dLoss * reductionScale(labels, params);
  std::vector<float> scratch;
  const float *x = logits.floats();
  float *o = dx.floats();
  forEachPosition(v, labels, params, [&](int64_t base, int64_t label) {
    double lse = logSumExp(x, base, v, scratch);
    if (v.inner == 1) {
      // The softmax is exp(x − lse): one vectorised pass.
      expShifted(x + base, o + base, v.c, float(lse));
      for (int64_t c = 0; c < v.c; ++c)
        o[base + c] = float(o[base + c] * scale);
    } else {
      for (int64_t c = 0; c < v.c; ++c) {
        int64_t i = base + c * v.inner;
        o[i] = float(std::exp(x[i] - lse) * scale);
      }
    }
    o[base + label * v.inner] -= float(scale);
  });
  return dx;
}

Tensor weft::exec::nllLoss(const Tensor &logProbs, const Tensor &labels,
                           const LossParams &params) {
  return Tensor::scalar(float(nllLossValue(logProbs, labels, params)));
}

double weft::exec::nllLossValue(const Tensor &logProbs, const Tensor &labels,
                                const LossParams &params) {
  ClassView v = viewOf(logProbs.getShape());
  double total = 0;
  forEachPosition(v, labels, params, [&](int64_t base, int64_t label) {
    total -= logProbs.floats()[base + label * v.inner];
  });
  return total * reductionScale(labels, params);
}

Tensor weft::exec::nllLossBackward(llvm::ArrayRef<int64_t> inputShape,
                                   const Tensor &labels, float dLoss,
                                   const LossParams &params) {
  ClassView v = viewOf(inputShape);
  Tensor dx(ElementType::F32, inputShape);
  float scale = float(dLoss * reductionScale(labels, params));
  forEachPosition(v, labels, params, [&](int64_t base, int64_t label) {
    dx.floats()[base + label * v.inner] = -scale;
  });
  return dx;
}
