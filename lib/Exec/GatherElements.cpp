//===- GatherElements.cpp - GatherElements and its scatter-add ------------===//

#include "weft/Exec/Movement.h"

using namespace weft::exec;

namespace {

/// For every element of `indices` (row-major), the flat offset of the data
/// element it reads.
template <typename Fn>
void forEachRead(llvm::ArrayRef<int64_t> dataShape, const Tensor &indices,
                 int64_t axis, Fn fn) {
  llvm::ArrayRef<int64_t> idxShape = indices.getShape();
  int64_t rank = idxShape.size(), n = indices.getNumElements();
  Shape strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dataShape[d + 1];
  Shape pos(rank, 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = pos[d];
      if (d == axis) {
        c = indices.ints()[j];
        if (c < 0)
          c += dataShape[d];
      }
      offset += c * strides[d];
    }
    fn(j, offset);
    for (int64_t d = rank - 1; d >= 0 && ++pos[d] == idxShape[d]; --d)
      pos[d] = 0;
  }
}

} // namespace

Tensor weft::exec::gatherElements(const Tensor &data, const Tensor &indices,
                                  int64_t axis) {
  Tensor out(data.isFloat() ? ElementType::F32 : data.getElementType(),
             indices.getShape());
  forEachRead(data.getShape(), indices, axis, [&](int64_t j, int64_t src) {
    if (data.isFloat())
      out.floats()[j] = data.floats()[src];
    else
      out.ints()[j] = data.ints()[src];
  });
  return out;
}

Tensor weft::exec::gatherElementsBackward(llvm::ArrayRef<int64_t> dataShape,
                                          const Tensor &indices,
                                          const Tensor &dy, int64_t axis) {
  Tensor dx(ElementType::F32, dataShape);
  forEachRead(dataShape, indices, axis, [&](int64_t j, int64_t dst) {
    dx.floats()[dst] += dy.floats()[j];
  });
  return dx;
}
