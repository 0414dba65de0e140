//===- Pool.cpp - Max, average and global average pooling -----------------===//

#include "weft/Exec/Pool.h"
#include <cmath>

using namespace weft::exec;

namespace {

/// The windows of a pool over the spatial dims of an N×C×… input.
struct Windows {
  int64_t planes = 0, inArea = 1, outArea = 1;
  Shape in, out, kernel, strides, padsBefore, dilations;
  bool excludePad;

  Windows(llvm::ArrayRef<int64_t> shape, const PoolParams &p)
      : planes(shape[0] * shape[1]), excludePad(p.excludePad) {
    size_t spatial = shape.size() - 2;
    auto entry = [](llvm::ArrayRef<int64_t> v, size_t d, int64_t dflt) {
      return d < v.size() ? v[d] : dflt;
    };
    for (size_t d = 0; d < spatial; ++d) {
      int64_t k = entry(p.kernel, d, 1), s = entry(p.strides, d, 1);
      int64_t dil = entry(p.dilations, d, 1);
      int64_t before = entry(p.pads, d, 0),
              after = entry(p.pads, spatial + d, 0);
      int64_t extent = dil * (k - 1) + 1;
      in.push_back(shape[2 + d]);
      out.push_back(
          std::max<int64_t>(0, (in.back() + before + after - extent) / s + 1));
      kernel.push_back(k);
      strides.push_back(s);
      padsBefore.push_back(before);
      dilations.push_back(dil);
      inArea *= in.back();
      outArea *= out.back();
    }
  }

  /// Calls fn(outIndex, inIndex) for every in-bounds input element of
  /// every window, windows and their elements in row-major order; padding
  /// is skipped.
  template <typename Fn> void forEach(Fn fn) const {
    size_t spatial = in.size();
    int64_t kernelArea = numElementsOf(kernel);
    Shape o(spatial, 0), k(spatial, 0);
    auto next = [](Shape &idx, llvm::ArrayRef<int64_t> extents) {
      for (int64_t d = int64_t(idx.size()) - 1;
           d >= 0 && ++idx[d] == extents[d]; --d)
        idx[d] = 0;
    };
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t w = 0; w < outArea; ++w, next(o, out)) {
        int64_t outIndex = pl * outArea + w;
        for (int64_t e = 0; e < kernelArea; ++e, next(k, kernel)) {
          int64_t inIndex = 0;
          bool inside = true;
          for (size_t d = 0; d < spatial && inside; ++d) {
            int64_t c = o[d] * strides[d] - padsBefore[d] + k[d] * dilations[d];
            inside = c >= 0 && c < in[d];
            inIndex = inIndex * in[d] + c;
          }
          if (inside)
            fn(outIndex, pl * inArea + inIndex);
        }
      }
  }

  /// The divisor of each output of an average: the kernel's size, or the
  /// window's input positions with `excludePad`.
  std::vector<float> divisors() const {
    std::vector<float> n(planes * outArea, float(numElementsOf(kernel)));
    if (excludePad) {
      std::fill(n.begin(), n.end(), 0.0f);
      forEach([&](int64_t o, int64_t) { n[o] += 1; });
    }
    return n;
  }
};

Shape outShape(llvm::ArrayRef<int64_t> in, const Windows &win) {
  Shape shape{in[0], in[1]};
  shape.append(win.out.begin(), win.out.end());
  return shape;
}

/// For every output, the input index of the first maximum of its window
/// (−1 when the window holds only padding).
std::vector<int64_t> argmaxes(const Tensor &x, const Windows &win) {
  std::vector<int64_t> arg(win.planes * win.outArea, -1);
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
