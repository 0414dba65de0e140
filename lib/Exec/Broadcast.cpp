//===- Broadcast.cpp - numpy broadcasting and its backward ----------------===//

#include "Indexing.h"
#include "weft/Exec/Elementwise.h"
#include <algorithm>

using namespace weft::exec;

Shape weft::exec::broadcastShapes(llvm::ArrayRef<int64_t> a,
                                  llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

Tensor weft::exec::broadcastTo(const Tensor &x, llvm::ArrayRef<int64_t> shape) {
  if (x.getShape() == shape)
    return x;
  Tensor out(x.getElementType(), shape);
  std::array<Shape, 1> strides{broadcastStrides(x.getShape(), shape)};
  if (x.isFloat()) {
    const float *in = x.floats();
    float *o = out.floats();
    forEachElement<1>(
        shape, strides,
        [&](int64_t i, std::array<int64_t, 1> off) { o[i] = in[off[0]]; });
  } else {
    const int64_t *in = x.ints();
    int64_t *o = out.ints();
    forEachElement<1>(
        shape, strides,
        [&](int64_t i, std::array<int64_t, 1> off) { o[i] = in[off[0]]; });
  }
  return out;
}

Tensor weft::exec::reduceToShape(const Tensor &g,
                                 llvm::ArrayRef<int64_t> shape) {
  if (g.getShape() == shape)
    return g;
  // Accumulate in double: broadcast dimensions can be long (a bias over
  // every token of a batch).
  std::vector<double> acc(numElementsOf(shape), 0.0);
  std::array<Shape, 1> strides{broadcastStrides(shape, g.getShape())};
  const float *in = g.floats();
  forEachRow<1>(g.getShape(), strides,
                [&](int64_t out, std::array<int64_t, 1> off,
                    const std::array<int64_t, 1> &inner, int64_t count) {
                  if (inner[0] == 0) {
                    double s = 0;
                    for (int64_t i = 0; i < count; ++i)
                      s += in[out + i];
                    acc[off[0]] += s;
                    return;
                  }
                  for (int64_t i = 0; i < count; ++i)
                    acc[off[0] + i] += in[out + i];
                });
  Tensor result(ElementType::F32, shape);
  std::copy(acc.begin(), acc.end(), result.floats());
  return result;
}
