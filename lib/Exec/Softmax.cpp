//===- Softmax.cpp - Softmax and log-softmax along one axis ---------------===//
//
// A tensor is viewed as outer × axis × inner; each (outer, inner) pair is one
// independent vector of `axis` elements at stride `inner`.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/Softmax.h"
#include <cmath>

using namespace weft::exec;

namespace {

struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView viewAround(llvm::ArrayRef<int64_t> shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    (d < axis ? v.outer : d == axis ? v.size : v.inner) *= shape[d];
  return v;
}

/// Calls fn(base) for every vector along the axis; element j of the vector
/// is at base + j·inner.
template <typename Fn> void forEachVector(const AxisView &v, Fn fn) {
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i)
      fn(o * v.size * v.inner + i);
}

Tensor softmaxImpl(const Tensor &x, int64_t axis, bool log) {
  AxisView v = viewAround(x.getShape(), axis);
  Tensor out(ElementType::F32, x.getShape());
  const float *in = x.floats();
  float *o = out.floats();
  int64_t s = v.inner;
  forEachVector(v, [&](int64_t base) {
    float m = -INFINITY;
    for (int64_t j = 0; j < v.size; ++j)
      m = std::max(m, in[base + j * s]);
    if (std::isinf(m))
      m = 0; // all −∞: keep exp finite
    double sum = 0;
    for (int64_t j = 0; j < v.size; ++j)
      sum += std::exp(double(in[base + j * s]) - m);
    if (log) {
      double lse = m + std::log(sum);
      for (int64_t j = 0; j < v.size; ++j)
        o[base + j * s] = float(in[base + j * s] - lse);
      return;
    }
    for (int64_t j = 0; j < v.size; ++j)
      o[base + j * s] = float(std::exp(double(in[base + j * s]) - m) / sum);
  });
  return out;
}

} // namespace

Tensor weft::exec::softmax(const Tensor &x, int64_t axis) {
  return softmaxImpl(x, axis, /*log=*/false);
}

Tensor weft::exec::logSoftmax(const Tensor &x, int64_t axis) {
  return softmaxImpl(x, axis, /*log=*/true);
}

Tensor weft::exec::softmaxBackward(const Tensor &y, const Tensor &dy,
                                   int64_t axis) {
  AxisView v = viewAround(y.getShape(), axis);
  Tensor dx(ElementType::F32, y.getShape());
  const float *py = y.floats(), *g = dy.floats();
  float *o = dx.floats();
  int64_t s = v.inner;
  forEachVector(v, [&](int64_t base) {
    double dot = 0;
    for (int64_t j = 0; j < v.size; ++j)
      dot += double(py[base + j * s]) * g[base + j * s];
    for (int64_t j = 0; j < v.size; ++j)
      o[base + j * s] = float(py[base + j * s] * (g[base + j * s] - dot));
  });
  return dx;
}

Tensor weft::exec::logSoftmaxBackward(const Tensor &y, const Tensor &dy,
                                      int64_t axis) {
  AxisView v = viewAround(y.getShape(), axis);
  Tensor dx(ElementType::F32, y.getShape());
  const float *py = y.floats(), *g = dy.floats();
  float *o = dx.floats();
  int64_t s = v.inner;
  forEachVector(v, [&](int64_t base) {
    double sum = 0;
    for (int64_t j = 0; j < v.size; ++j)
      sum += g[base + j * s];
    for (int64_t j = 0; j < v.size; ++j)
      o[base + j * s] =
          float(g[base + j * s] - std::exp(double(py[base + j * s])) * sum);
  });
  return dx;
}
