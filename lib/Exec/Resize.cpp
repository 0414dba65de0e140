//===- Resize.cpp - Separable resampling and its adjoint ------------------===//
//
// ONNX Resize is separable: each resampled dim is a fixed linear map whose
// row j holds the weights of the input elements result index j reads
// (the taps). The forward applies the dims' maps one after another, the
// backward their transposes in the reverse order. The taps follow ONNX's
// reference implementation (onnx/reference/ops/op_resize.py) step by step:
// the source coordinate, the ratio to the left neighbour, the kernel's
// coefficients, the window of neighbours, edge clamping.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/Resize.h"
#include <cmath>
#include <numeric>

using namespace weft::exec;

namespace {

/// The source coordinate of result index y.
double sourceCoordinate(const ResizeParams &p, double y, int64_t in,
                        int64_t outInt, double scale) {
  double out = scale * double(in);
  const std::string &m = p.coordinateMode;
  if (m == "align_corners")
    return out == 1 ? 0.0 : y * double(in - 1) / (out - 1);
  if (m == "asymmetric")
    return y / scale;
  if (m == "pytorch_half_pixel")
    return out == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double adjustment = double(outInt) / out;
    double center = double(in) / 2;
    double offset = center * (1 - adjustment);
    return offset + (y + 0.5) / scale - 0.5;
  }
  return (y + 0.5) / scale - 0.5; // half_pixel
}

double cubic(double x, double a) {
  x = std::fabs(x);
  double x2 = x * x, x3 = x * x2;
  if (x <= 1)
    return (a + 2) * x3 - (a + 3) * x2 + 1;
  if (x < 2)
    return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
  return 0.0;
}

std::vector<double> normalized(std::vector<double> c) {
  double sum = std::accumulate(c.begin(), c.end(), 0.0);
  for (double &v : c)
    v /= sum;
  return c;
}

/// The kernel's coefficients for a source coordinate `ratio` (in (0, 1])
/// past its left neighbour.
std::vector<double> coefficients(const ResizeParams &p, double ratio,
                                 double scale) {
  if (p.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    const std::string &m = p.nearestMode;
    bool right = m == "ceil" ? true
                 : m == "floor"
                     ? false
                     : (m == "round_prefer_ceil" ? ratio >= 0.5 : ratio > 0.5);
    return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  }
  double a = p.cubicCoeffA;
  if (p.antialias) {
    // The kernel stretched by 1 / scale where the dim shrinks.
    double s = std::min(scale, 1.0);
    std::vector<double> c;
    if (p.mode == "linear") {
      int64_t start = int64_t(std::floor(-1 / s) + 1);
      int64_t footprint = 2 - 2 * start;
      for (int64_t i = start; i < start + footprint; ++i)
        c.push_back(
            std::clamp(1 - std::fabs((double(i) - ratio) * s), 0.0, 1.0));
    } else {
      int64_t start = int64_t(std::floor(-2 / s) + 1), end = 2 - start;
      for (int64_t i = start; i < end; ++i)
        c.push_back(cubic(s * (double(i) - ratio), a));
    }
    return normalized(std::move(c));
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
          ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
          ((a + 2) * q - (a + 3)) * q * q + 1,
          ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
}

bool isIdentity(int64_t in, int64_t out, double scale) {
  return in == out && std::fabs(scale - 1.0) <= 1e-9;
}

/// x viewed as outer × extent × inner around `dim`.
struct AxisView {
  int64_t outer, inner;
  AxisView(llvm::ArrayRef<int64_t> shape, size_t dim)
      : outer(numElementsOf(shape.take_front(dim))),
        inner(numElementsOf(shape.drop_front(dim + 1))) {}
};

} // namespace

ResizeTaps weft::exec::resizeTaps(int64_t in, int64_t out, double scale,
                                  const ResizeParams &params) {
  ResizeTaps t;
  for (int64_t y = 0; y < out; ++y) {
    double x = sourceCoordinate(params, double(y), in, out, scale);
    double xInt = std::floor(x);
    double ratio = x == xInt ? 1.0 : x - xInt;
    std::vector<double> c = coefficients(params, ratio, scale);
    int64_t n = c.size();
    t.taps = n;
    // The n neighbours nearest x (ties to the smaller index), in the
    // coordinates of the input padded by ⌈n/2⌉ at both ends.
    int64_t pad = (n + 1) / 2;
    double xp = x + double(pad);
    double pp = std::floor(xp), frac = xp - pp;
    int64_t offset;
    if (n % 2 == 0)
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    int64_t start = int64_t(pp) + offset - pad;
    if (params.excludeOutside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (start + i < 0 || start + i >= in)
          c[i] = 0;
        sum += c[i];
      }
      if (sum != 0)
        for (double &v : c)
          v /= sum;
    }
    for (int64_t i = 0; i < n; ++i) {
      t.index.push_back(std::clamp<int64_t>(start + i, 0, in - 1));
      t.weight.push_back(c[i]);
    }
  }
  return t;
}

Tensor weft::exec::resize(const Tensor &x, const ResizeParams &params,
                          llvm::ArrayRef<int64_t> resultShape) {
  Tensor cur = x;
  cur.convertTo(ElementType::F32);
  for (size_t d = 0; d < resultShape.size(); ++d) {
    int64_t in = cur.getDim(d), out = resultShape[d];
    if (isIdentity(in, out, params.scales[d]))
      continue;
    ResizeTaps taps = resizeTaps(in, out, params.scales[d], params);
    Shape shape(cur.getShape().begin(), cur.getShape().end());
    shape[d] = out;
    Tensor next(ElementType::F32, shape);
    AxisView v(shape, d);
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t j = 0; j < out; ++j) {
        float *dst = next.floats() + (o * out + j) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) {
          double sum = 0;
          for (int64_t t = 0; t < taps.taps; ++t) {
            int64_t k = j * taps.taps + t;
            sum += taps.weight[k] *
                   cur.floats()[(o * in + taps.index[k]) * v.inner + i];
          }
          dst[i] = float(sum);
        }
      }
    cur = std::move(next);
  }
  return cur;
}

Tensor weft::exec::resizeBackward(llvm::ArrayRef<int64_t> inputShape,
                                  const Tensor &dy,
                                  const ResizeParams &params) {
  // The shapes between the passes of the forward.
  std::vector<Shape> shapes{Shape(inputShape.begin(), inputShape.end())};
  for (size_t d = 0; d < inputShape.size(); ++d) {
    Shape s = shapes.back();
    s[d] = dy.getDim(d);
    shapes.push_back(s);
  }
  Tensor cur = dy;
  cur.convertTo(ElementType::F32);
  for (size_t d = inputShape.size(); d-- > 0;) {
    int64_t in = inputShape[d], out = dy.getDim(d);
    if (isIdentity(in, out, params.scales[d]))
      continue;
    ResizeTaps taps = resizeTaps(in, out, params.scales[d], params);
    Tensor prev(ElementType::F32, shapes[d]);
    AxisView v(shapes[d], d);
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t j = 0; j < out; ++j) {
        const float *src = cur.floats() + (o * out + j) * v.inner;
        for (int64_t t = 0; t < taps.taps; ++t) {
          int64_t k = j * taps.taps + t;
          float w = float(taps.weight[k]);
          if (w == 0)
            continue;
          float *dst = prev.floats() + (o * in + taps.index[k]) * v.inner;
          for (int64_t i = 0; i < v.inner; ++i)
            dst[i] += w * src[i];
        }
      }
    cur = std::move(prev);
  }
  return cur;
}
