//===- VectorMath.cpp - Vectorised helpers for long rows ------------------===//

#include "VectorMath.h"
#include <Eigen/Core>

using namespace weft::exec;

double weft::exec::expShifted(const float *in, float *out, int64_t n,
                              float shift) {
  Eigen::Map<const Eigen::ArrayXf> x(in, n);
  Eigen::Map<Eigen::ArrayXf> y(out, n);
  y = (x - shift).exp();
  // Sum in blocks: float within a short block, double across blocks.
  double sum = 0;
  constexpr int64_t block = 256;
  for (int64_t i = 0; i < n; i += block)
    sum += double(y.segment(i, std::min(block, n - i)).sum());
  return sum;
}

float weft::exec::maxOf(const float *in, int64_t n) {
  return Eigen::Map<const Eigen::ArrayXf>(in, n).maxCoeff();
}
