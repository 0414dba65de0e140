//===- BatchNorm.cpp - Batch normalisation per channel --------------------===//

#include "weft/Exec/Norm.h"
#include <cmath>
#include <vector>

using namespace weft::exec;

namespace {

/// N×C×S view of an N×C×… tensor (S = product of the spatial dims).
struct ChannelView {
  int64_t n, c, s;
  int64_t offset(int64_t ni, int64_t ci) const { return (ni * c + ci) * s; }
};

ChannelView viewOf(const Tensor &x) {
  llvm::ArrayRef<int64_t> shape = x.getShape();
  return {shape[0], shape.size() > 1 ? shape[1] : 1,
          numElementsOf(shape.drop_front(std::min<size_t>(2, shape.size())))};
}

/// Per-channel mean and 1/sqrt(var + ε): of the batch when training, else
/// of the running statistics.
void channelStats(const Tensor &x, const Tensor &runningMean,
                  const Tensor &runningVar, double eps, bool training,
                  std::vector<double> &mean, std::vector<double> &rstd) {
  ChannelView v = viewOf(x);
  mean.assign(v.c, 0.0);
  rstd.assign(v.c, 0.0);
  for (int64_t c = 0; c < v.c; ++c) {
    if (!training) {
      mean[c] = runningMean.floats()[c];
      rstd[c] = 1.0 / std::sqrt(double(runningVar.floats()[c]) + eps);
      continue;
    }
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t s = 0; s < v.s; ++s)
        sum += x.floats()[v.offset(n, c) + s];
    double count = double(v.n * v.s);
    mean[c] = sum / count;
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t s = 0; s < v.s; ++s) {
        double d = x.floats()[v.offset(n, c) + s] - mean[c];
        sq += d * d;
      }
    rstd[c] = 1.0 / std::sqrt(sq / count + eps);
  }
}

} // namespace

Tensor weft::exec::batchNorm(const Tensor &x, const Tensor &scale,
                             const Tensor &bias, const Tensor &runningMean,
                             const Tensor &runningVar, double epsilon,
                             bool training) {
  ChannelView v = viewOf(x);
  std::vector<double> mean, rstd;
  channelStats(x, runningMean, runningVar, epsilon, training, mean, rstd);
  Tensor out(ElementType::F32, x.getShape());
  for (int64_t n = 0; n < v.n; ++n)
    for (int64_t c = 0; c < v.c; ++c) {
      const float *in = x.floats() + v.offset(n, c);
      float *o = out.floats() + v.offset(n, c);
      double g = scale.floats()[c] * rstd[c], b = bias.floats()[c];
      for (int64_t s = 0; s < v.s; ++s)
        o[s] = float((in[s] - mean[c]) * g + b);
    }
  return out;
}

NormGrads weft::exec::batchNormBackward(const Tensor &x, const Tensor &scale,
                                        const Tensor &runningMean,
                                        const Tensor &runningVar,
                                        const Tensor &dy, double epsilon,
                                        bool training) {
  ChannelView v = viewOf(x);
  std::vector<double> mean, rstd;
  channelStats(x, runningMean, runningVar, epsilon, training, mean, rstd);
  NormGrads grads{Tensor(ElementType::F32, x.getShape()),
                  Tensor(ElementType::F32, scale.getShape()),
                  Tensor(ElementType::F32, scale.getShape())};
  double count = double(v.n * v.s);
  for (int64_t c = 0; c < v.c; ++c) {
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t s = 0; s < v.s; ++s) {
        int64_t i = v.offset(n, c) + s;
        double xhat = (x.floats()[i] - mean[c]) * rstd[c];
        sumDy += dy.floats()[i];
        sumDyXhat += dy.floats()[i] * xhat;
      }
    grads.scale.floats()[c] = float(sumDyXhat);
    grads.bias.floats()[c] = float(sumDy);
    double g = scale.floats()[c] * rstd[c];
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t s = 0; s < v.s; ++s) {
        int64_t i = v.offset(n, c) + s;
        double d = dy.floats()[i];
        if (training) {
          // The batch statistics depend on x too.
          double xhat = (x.floats()[i] - mean[c]) * rstd[c];
          d -= (sumDy + xhat * sumDyXhat) / count;
        }
        grads.input.floats()[i] = float(g * d);
      }
  }
  return grads;
}
