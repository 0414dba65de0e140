//===- Indexing.h - Iteration over broadcast and strided views --*- C++ -*-===//
//
// Private to lib/Exec: the loops every elementwise, reduction and movement
// kernel shares.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_INDEXING_H
#define WEFT_LIB_EXEC_INDEXING_H

#include "weft/Exec/Tensor.h"
#include <array>

namespace weft::exec {

/// Strides of a tensor of `inShape` read as a broadcast to `outShape`
/// (right-aligned, numpy rules): 0 on broadcast dimensions.
inline Shape broadcastStrides(llvm::ArrayRef<int64_t> inShape,
                              llvm::ArrayRef<int64_t> outShape) {
  Shape strides(outShape.size(), 0);
  Shape in = stridesOf(inShape);
  int64_t shift = int64_t(outShape.size()) - int64_t(inShape.size());
  for (int64_t d = 0; d < int64_t(inShape.size()); ++d)
    strides[d + shift] = inShape[d] == 1 ? 0 : in[d];
  return strides;
}

/// Walks the rows (innermost dimension) of a tensor of `outShape` in
/// row-major order, with N other tensors read through `strides` (each of
/// outShape's rank). Calls `fn(outOffset, offsets, innerStrides, count)` for
/// each row.
template <size_t N, typename Fn>
void forEachRow(llvm::ArrayRef<int64_t> outShape,
                const std::array<Shape, N> &strides, Fn fn) {
  int64_t rank = outShape.size();
  int64_t total = numElementsOf(outShape);
  if (total == 0)
    return;
  int64_t count = rank == 0 ? 1 : outShape[rank - 1];
  std::array<int64_t, N> inner{}, offsets{};
  for (size_t k = 0; k < N; ++k)
    inner[k] = rank == 0 ? 0 : strides[k][rank - 1];
  Shape index(std::max<int64_t>(rank - 1, 0), 0);
  for (int64_t out = 0; out < total; out += count) {
    fn(out, offsets, inner, count);
    // Advance the odometer over the outer dimensions.
    for (int64_t d = rank - 2; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (index[d] < outShape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][d] * outShape[d];
      index[d] = 0;
    }
  }
}

/// Calls `fn(outIndex, offsets)` for every element of `outShape`.
template <size_t N, typename Fn>
void forEachElement(llvm::ArrayRef<int64_t> outShape,
                    const std::array<Shape, N> &strides, Fn fn) {
  forEachRow<N>(outShape, strides,
                [&](int64_t out, std::array<int64_t, N> offsets,
                    const std::array<int64_t, N> &inner, int64_t count) {
                  for (int64_t i = 0; i < count; ++i) {
                    fn(out + i, offsets);
                    for (size_t k = 0; k < N; ++k)
                      offsets[k] += inner[k];
                  }
                });
}

/// Normalises a possibly negative axis of a rank-`rank` tensor.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_INDEXING_H
