//===- Pool.cpp - Max, average and global average pooling -----------------===//

#include "weft/Exec/Pool.h"
#include <cmath>

using namespace weft::exec;

namespace {

struct Windows {
  int64_t planes, h, w, oh, ow;
  PoolParams p;

  Windows(llvm::ArrayRef<int64_t> in, const PoolParams &params)
      : planes(in[0] * in[1]), h(in[2]), w(in[3]), p(params) {
    oh = (h + p.pads[0] + p.pads[2] - p.kernel[0]) / p.strides[0] + 1;
    ow = (w + p.pads[1] + p.pads[3] - p.kernel[1]) / p.strides[1] + 1;
  }

  /// Calls fn(plane, outIndex, inIndex) for every in-bounds input element
  /// of every window; padding is skipped.
  template <typename Fn> void forEach(Fn fn) const {
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t out = (pl * oh + y) * ow + x;
          for (int64_t ki = 0; ki < p.kernel[0]; ++ki) {
            int64_t iy = y * p.strides[0] - p.pads[0] + ki;
            if (iy < 0 || iy >= h)
              continue;
            for (int64_t kj = 0; kj < p.kernel[1]; ++kj) {
              int64_t ix = x * p.strides[1] - p.pads[1] + kj;
              if (ix >= 0 && ix < w)
                fn(out, (pl * h + iy) * w + ix);
            }
          }
        }
  }
};

Shape outShape(llvm::ArrayRef<int64_t> in, const Windows &win) {
  return {in[0], in[1], win.oh, win.ow};
}

/// For every output, the input index of the first maximum of its window
/// (−1 when the window holds only padding).
std::vector<int64_t> argmaxes(const Tensor &x, const Windows &win) {
  std::vector<int64_t> arg(win.planes * win.oh * win.ow, -1);
  const float *in = x.floats();
  win.forEach([&](int64_t out, int64_t i) {
    if (arg[out] < 0 || in[i] > in[arg[out]])
      arg[out] = i;
  });
  return arg;
}

} // namespace

Tensor weft::exec::maxPool(const Tensor &x, const PoolParams &params) {
  Windows win(x.getShape(), params);
  Tensor out(ElementType::F32, outShape(x.getShape(), win));
  std::vector<int64_t> arg = argmaxes(x, win);
  for (size_t i = 0; i < arg.size(); ++i)
    out.floats()[i] = arg[i] < 0 ? -INFINITY : x.floats()[arg[i]];
  return out;
}

Tensor weft::exec::maxPoolBackward(const Tensor &x, const Tensor &dy,
                                   const PoolParams &params) {
  Windows win(x.getShape(), params);
  Tensor dx(ElementType::F32, x.getShape());
  std::vector<int64_t> arg = argmaxes(x, win);
  for (size_t i = 0; i < arg.size(); ++i)
    if (arg[i] >= 0)
      dx.floats()[arg[i]] += dy.floats()[i];
  return dx;
}

Tensor weft::exec::avgPool(const Tensor &x, const PoolParams &params) {
  Windows win(x.getShape(), params);
  Tensor out(ElementType::F32, outShape(x.getShape(), win));
  float scale = 1.0f / float(params.kernel[0] * params.kernel[1]);
  win.forEach(
      [&](int64_t o, int64_t i) { out.floats()[o] += x.floats()[i] * scale; });
  return out;
}

Tensor weft::exec::avgPoolBackward(llvm::ArrayRef<int64_t> inputShape,
                                   const Tensor &dy, const PoolParams &params) {
  Windows win(inputShape, params);
  Tensor dx(ElementType::F32, inputShape);
  float scale = 1.0f / float(params.kernel[0] * params.kernel[1]);
  win.forEach(
      [&](int64_t o, int64_t i) { dx.floats()[i] += dy.floats()[o] * scale; });
  return dx;
}

Tensor weft::exec::globalAvgPool(const Tensor &x) {
  llvm::ArrayRef<int64_t> s = x.getShape();
  int64_t planes = s[0] * s[1], area = s[2] * s[3];
  Tensor out(ElementType::F32, {s[0], s[1], 1, 1});
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < area; ++i)
      sum += x.floats()[p * area + i];
    out.floats()[p] = float(sum / area);
  }
  return out;
}

Tensor weft::exec::globalAvgPoolBackward(llvm::ArrayRef<int64_t> inputShape,
                                         const Tensor &dy) {
  int64_t planes = inputShape[0] * inputShape[1];
  int64_t area = inputShape[2] * inputShape[3];
  Tensor dx(ElementType::F32, inputShape);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < area; ++i)
      dx.floats()[p * area + i] = dy.floats()[p] / float(area);
  return dx;
}
