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
    int64_t kh = p.dilations[0] * (p.kernel[0] - 1) + 1;
    int64_t kw = p.dilations[1] * (p.kernel[1] - 1) + 1;
    oh = (h + p.pads[0] + p.pads[2] - kh) / p.strides[0] + 1;
    ow = (w + p.pads[1] + p.pads[3] - kw) / p.strides[1] + 1;
  }

  /// Calls fn(outIndex, inIndex) for every in-bounds input element of
  /// every window; padding is skipped.
  template <typename Fn> void forEach(Fn fn) const {
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t out = (pl * oh + y) * ow + x;
          for (int64_t ki = 0; ki < p.kernel[0]; ++ki) {
            int64_t iy = y * p.strides[0] - p.pads[0] + ki * p.dilations[0];
            if (iy < 0 || iy >= h)
              continue;
            for (int64_t kj = 0; kj < p.kernel[1]; ++kj) {
              int64_t ix = x * p.strides[1] - p.pads[1] + kj * p.dilations[1];
              if (ix >= 0 && ix < w)
                fn(out, (pl * h + iy) * w + ix);
            }
          }
        }
  }

  /// The divisor of each output of an average: the kernel's size, or the
  /// window's input positions with `excludePad`.
  std::vector<float> divisors() const {
    std::vector<float> n(planes * oh * ow, float(p.kernel[0] * p.kernel[1]));
    if (p.excludePad) {
      std::fill(n.begin(), n.end(), 0.0f);
      forEach([&](int64_t o, int64_t) { n[o] += 1; });
    }
    return n;
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

Shape weft::exec::poolOutputShape(llvm::ArrayRef<int64_t> inputShape,
                                  const PoolParams &params) {
  return outShape(inputShape, Windows(inputShape, params));
}

void weft::exec::forEachPoolWindowElement(
    llvm::ArrayRef<int64_t> inputShape, const PoolParams &params,
    llvm::function_ref<void(int64_t, int64_t)> fn) {
  Windows(inputShape, params).forEach(fn);
}

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
  std::vector<float> n = win.divisors();
  win.forEach([&](int64_t o, int64_t i) { out.floats()[o] += x.floats()[i]; });
  for (size_t o = 0; o < n.size(); ++o)
    out.floats()[o] = n[o] ? out.floats()[o] / n[o] : 0.0f;
  return out;
}

Tensor weft::exec::avgPoolBackward(llvm::ArrayRef<int64_t> inputShape,
                                   const Tensor &dy, const PoolParams &params) {
  Windows win(inputShape, params);
  Tensor dx(ElementType::F32, inputShape);
  std::vector<float> n = win.divisors();
  win.forEach(
      [&](int64_t o, int64_t i) { dx.floats()[i] += dy.floats()[o] / n[o]; });
  return dx;
}

/// N×C×… → N×C×1…: the spatial dims may be any number (1-d, 2-d, 3-d).
Tensor weft::exec::globalAvgPool(const Tensor &x) {
  llvm::ArrayRef<int64_t> s = x.getShape();
  int64_t planes = s[0] * s[1], area = numElementsOf(s.drop_front(2));
  Shape shape(s.size(), 1);
  shape[0] = s[0];
  shape[1] = s[1];
  Tensor out(ElementType::F32, shape);
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
  int64_t area = numElementsOf(inputShape.drop_front(2));
  Tensor dx(ElementType::F32, inputShape);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < area; ++i)
      dx.floats()[p * area + i] = dy.floats()[p] / float(area);
  return dx;
}
