//===- Gather.cpp - Gather (embedding lookup) and its scatter-add ---------===//

#include "weft/Exec/Movement.h"
#include <cstring>

using namespace weft::exec;

namespace {

/// data viewed as outer × dim × inner around `axis`.
struct GatherView {
  int64_t outer, dim, inner, count;
  int64_t index(const Tensor &indices, int64_t j) const {
    int64_t i = indices.ints()[j];
    return i < 0 ? i + dim : i;
  }
};

GatherView viewOf(llvm::ArrayRef<int64_t> dataShape, const Tensor &indices,
                  int64_t axis) {
  return {numElementsOf(dataShape.take_front(axis)), dataShape[axis],
          numElementsOf(dataShape.drop_front(axis + 1)),
          indices.getNumElements()};
}

} // namespace

Tensor weft::exec::gather(const Tensor &data, const Tensor &indices,
                          int64_t axis) {
  llvm::ArrayRef<int64_t> ds = data.getShape();
  Shape shape(ds.begin(), ds.begin() + axis);
  shape.append(indices.getShape().begin(), indices.getShape().end());
  shape.append(ds.begin() + axis + 1, ds.end());
  GatherView v = viewOf(ds, indices, axis);
  Tensor out(data.isFloat() ? ElementType::F32 : data.getElementType(), shape);
  // Rows of no elements move nothing (and empty tensors have no buffer).
  if (v.inner == 0)
    return out;
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t j = 0; j < v.count; ++j) {
      int64_t src = (o * v.dim + v.index(indices, j)) * v.inner;
      int64_t dst = (o * v.count + j) * v.inner;
      if (data.isFloat())
        std::memcpy(out.floats() + dst, data.floats() + src,
                    v.inner * sizeof(float));
      else
        std::memcpy(out.ints() + dst, data.ints() + src,
                    v.inner * sizeof(int64_t));
    }
  return out;
}

Tensor weft::exec::gatherBackward(llvm::ArrayRef<int64_t> dataShape,
                                  const Tensor &indices, const Tensor &dy,
                                  int64_t axis) {
  GatherView v = viewOf(dataShape, indices, axis);
  Tensor dx(ElementType::F32, dataShape);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t j = 0; j < v.count; ++j) {
      float *dst = dx.floats() + (o * v.dim + v.index(indices, j)) * v.inner;
      const float *src = dy.floats() + (o * v.count + j) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i)
        dst[i] += src[i];
    }
  return dx;
}
