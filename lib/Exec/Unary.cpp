//===- Unary.cpp - Elementwise unary kernels and clip ---------------------===//

#include "weft/Exec/Unary.h"
#include <cmath>

using namespace weft::exec;

static constexpr double kSqrtHalf = 0.70710678118654752440;
static constexpr double kInvSqrt2Pi = 0.39894228040143267794;

template <typename Fn> static Tensor mapFloat(const Tensor &x, Fn fn) {
  Tensor out(ElementType::F32, x.getShape());
  const float *in = x.floats();
  float *o = out.floats();
  for (int64_t i = 0, e = x.getNumElements(); i < e; ++i)
    o[i] = fn(in[i]);
  return out;
}

Tensor weft::exec::unary(UnaryKind kind, const Tensor &x) {
  if (!x.isFloat()) {
    Tensor out(ElementType::I64, x.getShape());
    for (int64_t i = 0, e = x.getNumElements(); i < e; ++i)
      out.ints()[i] = kind == UnaryKind::Neg ? -x.ints()[i] : x.ints()[i];
    return out;
  }
  switch (kind) {
  case UnaryKind::Sqrt:
    return mapFloat(x, [](float v) { return std::sqrt(v); });
  case UnaryKind::Rsqrt:
    return mapFloat(x, [](float v) { return 1.0f / std::sqrt(v); });
  case UnaryKind::Neg:
    return mapFloat(x, [](float v) { return -v; });
  case UnaryKind::Relu:
    return mapFloat(x, [](float v) { return v > 0.0f ? v : 0.0f; });
  case UnaryKind::Gelu:
    return mapFloat(x, [](float v) {
      return float(0.5 * v * (1.0 + std::erf(v * kSqrtHalf)));
    });
  case UnaryKind::Tanh:
    return mapFloat(x, [](float v) { return std::tanh(v); });
  case UnaryKind::Sigmoid:
    return mapFloat(
        x, [](float v) { return float(1.0 / (1.0 + std::exp(-double(v)))); });
  case UnaryKind::Erf:
    return mapFloat(x, [](float v) { return std::erf(v); });
  case UnaryKind::Exp:
    return mapFloat(x, [](float v) { return std::exp(v); });
  case UnaryKind::Log:
    return mapFloat(x, [](float v) { return std::log(v); });
  case UnaryKind::Sin:
    return mapFloat(x, [](float v) { return std::sin(v); });
  case UnaryKind::Cos:
    return mapFloat(x, [](float v) { return std::cos(v); });
  case UnaryKind::Tan:
    return mapFloat(x, [](float v) { return std::tan(v); });
  case UnaryKind::Asin:
    return mapFloat(x, [](float v) { return std::asin(v); });
  case UnaryKind::Acos:
    return mapFloat(x, [](float v) { return std::acos(v); });
  case UnaryKind::Atan:
    return mapFloat(x, [](float v) { return std::atan(v); });
  case UnaryKind::Sinh:
    return mapFloat(x, [](float v) { return std::sinh(v); });
  case UnaryKind::Cosh:
    return mapFloat(x, [](float v) { return std::cosh(v); });
  case UnaryKind::Asinh:
    return mapFloat(x, [](float v) { return std::asinh(v); });
  case UnaryKind::Acosh:
    return mapFloat(x, [](float v) { return std::acosh(v); });
  case UnaryKind::Atanh:
    return mapFloat(x, [](float v) { return std::atanh(v); });
  case UnaryKind::Floor:
    return mapFloat(x, [](float v) { return std::floor(v); });
  case UnaryKind::Ceil:
    return mapFloat(x, [](float v) { return std::ceil(v); });
  case UnaryKind::Round:
    // The default rounding mode rounds halves to even (NumPy's rint).
    return mapFloat(x, [](float v) { return std::nearbyint(v); });
  }
  return Tensor();
}

Tensor weft::exec::unaryBackward(UnaryKind kind, const Tensor &x,
                                 const Tensor &y, const Tensor &dy) {
  Tensor out(ElementType::F32, dy.getShape());
  const float *xs = x.floats(), *ys = y.floats(), *g = dy.floats();
  float *o = out.floats();
  int64_t n = dy.getNumElements();
  for (int64_t i = 0; i < n; ++i) {
    double v = xs[i], r = ys[i], d;
    switch (kind) {
    case UnaryKind::Sqrt:
      d = 0.5 / r;
      break;
    case UnaryKind::Rsqrt:
      d = -0.5 * r * r * r;
      break;
    case UnaryKind::Neg:
      d = -1.0;
      break;
    case UnaryKind::Relu:
      d = v > 0.0 ? 1.0 : 0.0;
      break;
    case UnaryKind::Gelu:
      d = 0.5 * (1.0 + std::erf(v * kSqrtHalf)) +
          v * kInvSqrt2Pi * std::exp(-0.5 * v * v);
      break;
    case UnaryKind::Tanh:
      d = 1.0 - r * r;
      break;
    case UnaryKind::Sigmoid:
      d = r * (1.0 - r);
      break;
    case UnaryKind::Erf:
      d = 2.0 * kInvSqrt2Pi * std::sqrt(2.0) * std::exp(-v * v);
      break;
    case UnaryKind::Exp:
      d = r;
      break;
    case UnaryKind::Log:
      d = 1.0 / v;
      break;
    case UnaryKind::Sin:
      d = std::cos(v);
      break;
    case UnaryKind::Cos:
      d = -std::sin(v);
      break;
    case UnaryKind::Tan:
      d = 1.0 + r * r;
      break;
    case UnaryKind::Asin:
      d = 1.0 / std::sqrt(1.0 - v * v);
      break;
    case UnaryKind::Acos:
      d = -1.0 / std::sqrt(1.0 - v * v);
      break;
    case UnaryKind::Atan:
      d = 1.0 / (1.0 + v * v);
      break;
    case UnaryKind::Sinh:
      d = std::cosh(v);
      break;
    case UnaryKind::Cosh:
      d = std::sinh(v);
      break;
    case UnaryKind::Asinh:
      d = 1.0 / std::sqrt(v * v + 1.0);
      break;
    case UnaryKind::Acosh:
      d = 1.0 / std::sqrt(v * v - 1.0);
      break;
    case UnaryKind::Atanh:
      d = 1.0 / (1.0 - v * v);
      break;
    case UnaryKind::Floor:
    case UnaryKind::Ceil:
    case UnaryKind::Round:
      d = 0.0;
      break;
    }
    o[i] = float(g[i] * d);
  }
  return out;
}

Tensor weft::exec::clip(const Tensor &x, std::optional<double> lo,
                        std::optional<double> hi) {
  float l = lo ? float(*lo) : -INFINITY, h = hi ? float(*hi) : INFINITY;
  if (!x.isFloat()) {
    Tensor out = x;
    for (int64_t i = 0, e = x.getNumElements(); i < e; ++i) {
      double v = std::min<double>(std::max<double>(x.ints()[i], l), h);
      out.ints()[i] = int64_t(v);
    }
    return out;
  }
  return mapFloat(x, [=](float v) { return std::min(std::max(v, l), h); });
}

Tensor weft::exec::clipBackward(const Tensor &x, std::optional<double> lo,
                                std::optional<double> hi, const Tensor &dy) {
  Tensor out(ElementType::F32, dy.getShape());
  float l = lo ? float(*lo) : -INFINITY, h = hi ? float(*hi) : INFINITY;
  for (int64_t i = 0, e = dy.getNumElements(); i < e; ++i) {
    float v = x.floats()[i];
    out.floats()[i] = v >= l && v <= h ? dy.floats()[i] : 0.0f;
  }
  return out;
}
