//===- Reduce.cpp - Sum, mean and max over axes ---------------------------===//

#include "weft/Exec/Reduce.h"
#include "Indexing.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>

using namespace weft::exec;

/// `shape` with the reduced axes set to 1.
static Shape keptShape(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> axes) {
  Shape kept(shape.begin(), shape.end());
  for (int64_t a : axes)
    kept[a] = 1;
  return kept;
}

Tensor weft::exec::reduce(ReduceKind kind, const Tensor &x,
                          llvm::ArrayRef<int64_t> axes, bool keepDims) {
  llvm::ArrayRef<int64_t> shape = x.getShape();
  Shape kept = keptShape(shape, axes);
  int64_t outCount = numElementsOf(kept);
  std::vector<double> acc(outCount, kind == ReduceKind::Max ? -INFINITY : 0.0);
  std::array<Shape, 1> strides{broadcastStrides(kept, shape)};
  forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> o) {
    double v = x.at(i);
    acc[o[0]] =
        kind == ReduceKind::Max ? std::max(acc[o[0]], v) : acc[o[0]] + v;
  });
  if (kind == ReduceKind::Mean) {
    double count = outCount ? double(x.getNumElements()) / outCount : 1.0;
    for (double &v : acc)
      v /= count;
  }
  Shape outShape;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (keepDims || !llvm::is_contained(axes, d))
      outShape.push_back(kept[d]);
  Tensor out(x.isFloat() ? ElementType::F32 : ElementType::I64, outShape);
  for (int64_t i = 0; i < outCount; ++i) {
    if (x.isFloat())
      out.floats()[i] = float(acc[i]);
    else // The maximum of nothing, −∞, is the lowest (negatable) integer.
      out.ints()[i] = std::isinf(acc[i]) ? -INT64_MAX : int64_t(acc[i]);
  }
  return out;
}

Tensor weft::exec::reduceBackward(ReduceKind kind, const Tensor &x,
                                  const Tensor &y, const Tensor &dy,
                                  llvm::ArrayRef<int64_t> axes) {
  llvm::ArrayRef<int64_t> shape = x.getShape();
  Shape kept = keptShape(shape, axes);
  std::array<Shape, 1> strides{broadcastStrides(kept, shape)};
  Tensor dx(ElementType::F32, shape);
  float *o = dx.floats();
  const float *g = dy.floats();
  if (kind != ReduceKind::Max) {
    double scale = 1.0;
    if (kind == ReduceKind::Mean && dy.getNumElements())
      scale = double(dy.getNumElements()) / double(x.getNumElements());
    forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> k) {
      o[i] = float(g[k[0]] * scale);
    });
    return dx;
  }
  std::vector<int64_t> ties(dy.getNumElements(), 0);
  const float *px = x.floats(), *py = y.floats();
  forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> k) {
    ties[k[0]] += px[i] == py[k[0]];
  });
  forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> k) {
    o[i] = px[i] == py[k[0]] ? g[k[0]] / float(ties[k[0]]) : 0.0f;
  });
  return dx;
}
