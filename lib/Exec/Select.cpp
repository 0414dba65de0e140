//===- Select.cpp - Compare, select and cast ------------------------------===//

#include "Indexing.h"
#include "weft/Exec/Elementwise.h"
#include "llvm/ADT/StringSwitch.h"

using namespace weft::exec;

std::optional<ComparePredicate>
weft::exec::parseComparePredicate(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ComparePredicate>>(name)
      .Case("eq", ComparePredicate::Eq)
      .Case("ne", ComparePredicate::Ne)
      .Case("lt", ComparePredicate::Lt)
      .Case("le", ComparePredicate::Le)
      .Case("gt", ComparePredicate::Gt)
      .Case("ge", ComparePredicate::Ge)
      .Default(std::nullopt);
}

static bool holds(ComparePredicate p, double l, double r) {
  switch (p) {
  case ComparePredicate::Eq:
    return l == r;
  case ComparePredicate::Ne:
    return l != r;
  case ComparePredicate::Lt:
    return l < r;
  case ComparePredicate::Le:
    return l <= r;
  case ComparePredicate::Gt:
    return l > r;
  case ComparePredicate::Ge:
    return l >= r;
  }
  return false;
}

Tensor weft::exec::compare(ComparePredicate predicate, const Tensor &lhs,
                           const Tensor &rhs) {
  Shape shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  Tensor out(ElementType::I1, shape);
  int64_t *o = out.ints();
  std::array<Shape, 2> strides{broadcastStrides(lhs.getShape(), shape),
                               broadcastStrides(rhs.getShape(), shape)};
  // Integers compare exactly as int64 values (no rounding through double).
  if (!lhs.isFloat() && !rhs.isFloat()) {
    const int64_t *l = lhs.ints(), *r = rhs.ints();
    forEachElement<2>(shape, strides,
                      [&](int64_t i, std::array<int64_t, 2> off) {
                        int64_t a = l[off[0]], b = r[off[1]];
                        o[i] = predicate == ComparePredicate::Eq   ? a == b
                               : predicate == ComparePredicate::Ne ? a != b
                               : predicate == ComparePredicate::Lt ? a < b
                               : predicate == ComparePredicate::Le ? a <= b
                               : predicate == ComparePredicate::Gt ? a > b
                                                                   : a >= b;
                      });
    return out;
  }
  forEachElement<2>(shape, strides, [&](int64_t i, std::array<int64_t, 2> off) {
    o[i] = holds(predicate, lhs.at(off[0]), rhs.at(off[1]));
  });
  return out;
}

Tensor weft::exec::select(const Tensor &condition, const Tensor &lhs,
                          const Tensor &rhs) {
  Shape shape = broadcastShapes(
      condition.getShape(), broadcastShapes(lhs.getShape(), rhs.getShape()));
  Tensor out(lhs.isFloat() ? ElementType::F32 : ElementType::I64, shape);
  std::array<Shape, 3> strides{broadcastStrides(condition.getShape(), shape),
                               broadcastStrides(lhs.getShape(), shape),
                               broadcastStrides(rhs.getShape(), shape)};
  const int64_t *c = condition.ints();
  if (lhs.isFloat()) {
    const float *l = lhs.floats(), *r = rhs.floats();
    float *o = out.floats();
    forEachElement<3>(shape, strides,
                      [&](int64_t i, std::array<int64_t, 3> off) {
                        o[i] = c[off[0]] ? l[off[1]] : r[off[2]];
                      });
    return out;
  }
  const int64_t *l = lhs.ints(), *r = rhs.ints();
  int64_t *o = out.ints();
  forEachElement<3>(shape, strides, [&](int64_t i, std::array<int64_t, 3> off) {
    o[i] = c[off[0]] ? l[off[1]] : r[off[2]];
  });
  return out;
}

BinaryGrads weft::exec::selectBackward(const Tensor &condition,
                                       llvm::ArrayRef<int64_t> lhsShape,
                                       llvm::ArrayRef<int64_t> rhsShape,
                                       const Tensor &dResult) {
  llvm::ArrayRef<int64_t> shape = dResult.getShape();
  Tensor dl(ElementType::F32, shape), dr(ElementType::F32, shape);
  std::array<Shape, 1> strides{broadcastStrides(condition.getShape(), shape)};
  const int64_t *c = condition.ints();
  const float *g = dResult.floats();
  float *pl = dl.floats(), *pr = dr.floats();
  forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> off) {
    (c[off[0]] ? pl : pr)[i] = g[i];
  });
  return {reduceToShape(dl, lhsShape), reduceToShape(dr, rhsShape)};
}

Tensor weft::exec::cast(const Tensor &x, ElementType type) {
  Tensor out = x;
  out.convertTo(type);
  return out;
}
