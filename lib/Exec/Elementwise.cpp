//===- Elementwise.cpp - Broadcasting binary ops and their backward -------===//

#include "weft/Exec/Elementwise.h"
#include "Indexing.h"
#include <cmath>

using namespace weft::exec;

namespace {

/// Applies `fn(l, r)` over the broadcast of two tensors whose values are
/// read as `T` (float or int64_t), writing `Out` values.
template <typename T, typename Out, typename Fn>
void mapBroadcast(const T *l, llvm::ArrayRef<int64_t> lShape, const T *r,
                  llvm::ArrayRef<int64_t> rShape, Out *out,
                  llvm::ArrayRef<int64_t> outShape, Fn fn) {
  std::array<Shape, 2> strides{broadcastStrides(lShape, outShape),
                               broadcastStrides(rShape, outShape)};
  forEachRow<2>(outShape, strides,
                [&](int64_t o, std::array<int64_t, 2> off,
                    const std::array<int64_t, 2> &inner, int64_t count) {
                  const T *lp = l + off[0], *rp = r + off[1];
                  Out *op = out + o;
                  if (inner[0] == 1 && inner[1] == 1) {
                    for (int64_t i = 0; i < count; ++i)
                      op[i] = fn(lp[i], rp[i]);
                    return;
                  }
                  for (int64_t i = 0; i < count; ++i)
                    op[i] = fn(lp[i * inner[0]], rp[i * inner[1]]);
                });
}

template <typename T> T applyBinary(BinaryKind kind, T l, T r) {
  switch (kind) {
  case BinaryKind::Add:
    return l + r;
  case BinaryKind::Sub:
    return l - r;
  case BinaryKind::Mul:
    return l * r;
  case BinaryKind::Div:
    return r == T(0) && std::is_integral<T>::value ? T(0) : l / r;
  case BinaryKind::Pow:
    return T(std::pow(double(l), double(r)));
  case BinaryKind::Min:
    return std::min(l, r);
  case BinaryKind::Max:
    return std::max(l, r);
  }
  return T(0);
}

} // namespace

Tensor weft::exec::binary(BinaryKind kind, const Tensor &lhs,
                          const Tensor &rhs) {
  Shape shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (!lhs.isFloat()) {
    Tensor out(ElementType::I64, shape);
    mapBroadcast(lhs.ints(), lhs.getShape(), rhs.ints(), rhs.getShape(),
                 out.ints(), shape, [kind](int64_t l, int64_t r) {
                   return applyBinary<int64_t>(kind, l, r);
                 });
    return out;
  }
  Tensor out(ElementType::F32, shape);
  const float *l = lhs.floats(), *r = rhs.floats();
  float *o = out.floats();
  auto run = [&](auto fn) {
    mapBroadcast(l, lhs.getShape(), r, rhs.getShape(), o, shape, fn);
  };
  // One instantiation per kind keeps the inner loops free of switches.
  switch (kind) {
  case BinaryKind::Add:
    run([](float a, float b) { return a + b; });
    break;
  case BinaryKind::Sub:
    run([](float a, float b) { return a - b; });
    break;
  case BinaryKind::Mul:
    run([](float a, float b) { return a * b; });
    break;
  case BinaryKind::Div:
    run([](float a, float b) { return a / b; });
    break;
  case BinaryKind::Pow:
    run([](float a, float b) { return std::pow(a, b); });
    break;
  case BinaryKind::Min:
    run([](float a, float b) { return std::min(a, b); });
    break;
  case BinaryKind::Max:
    run([](float a, float b) { return std::max(a, b); });
    break;
  }
  return out;
}

BinaryGrads weft::exec::binaryBackward(BinaryKind kind, const Tensor &lhs,
                                       const Tensor &rhs, const Tensor &result,
                                       const Tensor &dResult) {
  llvm::ArrayRef<int64_t> shape = dResult.getShape();
  if (kind == BinaryKind::Add)
    return {reduceToShape(dResult, lhs.getShape()),
            reduceToShape(dResult, rhs.getShape())};
  Tensor dl(ElementType::F32, shape), dr(ElementType::F32, shape);
  float *pl = dl.floats(), *pr = dr.floats();
  const float *l = lhs.floats(), *r = rhs.floats();
  const float *y = result.floats(), *dy = dResult.floats();
  std::array<Shape, 2> strides{broadcastStrides(lhs.getShape(), shape),
                               broadcastStrides(rhs.getShape(), shape)};
  forEachElement<2>(shape, strides, [&](int64_t i, std::array<int64_t, 2> o) {
    float a = l[o[0]], b = r[o[1]], g = dy[i];
    switch (kind) {
    case BinaryKind::Add:
      break;
    case BinaryKind::Sub:
      pl[i] = g;
      pr[i] = -g;
      break;
    case BinaryKind::Mul:
      pl[i] = g * b;
      pr[i] = g * a;
      break;
    case BinaryKind::Div:
      pl[i] = g / b;
      pr[i] = -g * y[i] / b;
      break;
    case BinaryKind::Pow:
      pl[i] = b == 0.0f ? 0.0f : g * b * std::pow(a, b - 1.0f);
      // d(a^b)/db = a^b·ln a, taken as 0 where a ≤ 0 (as PyTorch at a = 0).
      pr[i] = a > 0.0f ? g * y[i] * std::log(a) : 0.0f;
      break;
    case BinaryKind::Min:
      pl[i] = a <= b ? g : 0.0f;
      pr[i] = a <= b ? 0.0f : g;
      break;
    case BinaryKind::Max:
      pl[i] = a >= b ? g : 0.0f;
      pr[i] = a >= b ? 0.0f : g;
      break;
    }
  });
  return {reduceToShape(dl, lhs.getShape()), reduceToShape(dr, rhs.getShape())};
}
