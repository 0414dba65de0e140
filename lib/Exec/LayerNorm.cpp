//===- LayerNorm.cpp - Layer normalisation --------------------------------===//

#include "weft/Exec/Norm.h"
#include <cmath>
#include <vector>

using namespace weft::exec;

namespace {

struct Rows {
  int64_t count, size;
};

Rows rowsOf(const Tensor &x, int64_t axis) {
  int64_t size = numElementsOf(x.getShape().drop_front(axis));
  return {size == 0 ? 0 : x.getNumElements() / size, size};
}

/// Mean and 1/sqrt(var + ε) of one row, accumulated in double.
std::pair<double, double> rowStats(const float *row, int64_t n, double eps) {
  double mean = 0, var = 0;
  for (int64_t j = 0; j < n; ++j)
    mean += row[j];
  mean /= n;
  for (int64_t j = 0; j < n; ++j)
    var += (row[j] - mean) * (row[j] - mean);
  var /= n;
  return {mean, 1.0 / std::sqrt(var + eps)};
}

} // namespace

Tensor weft::exec::layerNorm(const Tensor &x, const Tensor &scale,
                             const Tensor &bias, int64_t axis, double epsilon) {
  Rows r = rowsOf(x, axis);
  Tensor out(ElementType::F32, x.getShape());
  const float *g = scale.floats(), *b = bias.floats();
  for (int64_t i = 0; i < r.count; ++i) {
    const float *row = x.floats() + i * r.size;
    float *o = out.floats() + i * r.size;
    auto [mean, rstd] = rowStats(row, r.size, epsilon);
    for (int64_t j = 0; j < r.size; ++j)
      o[j] = float((row[j] - mean) * rstd * g[j] + b[j]);
  }
  return out;
}

NormGrads weft::exec::layerNormBackward(const Tensor &x, const Tensor &scale,
                                        const Tensor &dy, int64_t axis,
                                        double epsilon) {
  Rows r = rowsOf(x, axis);
  Tensor dx(ElementType::F32, x.getShape());
  std::vector<double> dScale(r.size, 0.0), dBias(r.size, 0.0), xhat(r.size),
      dxhat(r.size);
  const float *g = scale.floats();
  for (int64_t i = 0; i < r.count; ++i) {
    const float *row = x.floats() + i * r.size;
    const float *gy = dy.floats() + i * r.size;
    auto [mean, rstd] = rowStats(row, r.size, epsilon);
    double meanD = 0, meanDX = 0;
    for (int64_t j = 0; j < r.size; ++j) {
      xhat[j] = (row[j] - mean) * rstd;
      dxhat[j] = double(gy[j]) * g[j];
      dScale[j] += double(gy[j]) * xhat[j];
      dBias[j] += gy[j];
      meanD += dxhat[j];
      meanDX += dxhat[j] * xhat[j];
    }
    meanD /= r.size;
    meanDX /= r.size;
    float *o = dx.floats() + i * r.size;
    for (int64_t j = 0; j < r.size; ++j)
      o[j] = float(rstd * (dxhat[j] - meanD - xhat[j] * meanDX));
  }
  NormGrads grads{std::move(dx), Tensor(ElementType::F32, scale.getShape()),
                  Tensor(ElementType::F32, scale.getShape())};
  std::copy(dScale.begin(), dScale.end(), grads.scale.floats());
  std::copy(dBias.begin(), dBias.end(), grads.bias.floats());
  return grads;
}
