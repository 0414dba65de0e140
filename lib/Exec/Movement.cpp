//===- Movement.cpp - Transpose, concat, split, slice ---------------------===//

#include "weft/Exec/Movement.h"
#include "Indexing.h"
#include <cstring>

using namespace weft::exec;

namespace {

/// Copies elements of `x` read through `strides` (of `outShape`'s rank,
/// starting at `base`) into a new tensor of `outShape`.
Tensor gatherStrided(const Tensor &x, llvm::ArrayRef<int64_t> outShape,
                     const Shape &strides, int64_t base) {
  Tensor out(x.isFloat() ? ElementType::F32 : x.getElementType(), outShape);
  std::array<Shape, 1> s{strides};
  if (x.isFloat()) {
    const float *in = x.floats() + base;
    float *o = out.floats();
    forEachRow<1>(outShape, s,
                  [&](int64_t i, std::array<int64_t, 1> off,
                      const std::array<int64_t, 1> &inner, int64_t count) {
                    for (int64_t j = 0; j < count; ++j)
                      o[i + j] = in[off[0] + j * inner[0]];
                  });
    return out;
  }
  const int64_t *in = x.ints() + base;
  int64_t *o = out.ints();
  forEachElement<1>(outShape, s, [&](int64_t i, std::array<int64_t, 1> off) {
    o[i] = in[off[0]];
  });
  return out;
}

/// Bytes and base pointer of a tensor's storage, whatever its type.
std::pair<const char *, size_t> rawData(const Tensor &t) {
  if (t.isFloat())
    return {reinterpret_cast<const char *>(t.floats()), sizeof(float)};
  return {reinterpret_cast<const char *>(t.ints()), sizeof(int64_t)};
}

char *rawData(Tensor &t) {
  return t.isFloat() ? reinterpret_cast<char *>(t.floats())
                     : reinterpret_cast<char *>(t.ints());
}

} // namespace

Tensor weft::exec::transpose(const Tensor &x, llvm::ArrayRef<int64_t> perm) {
  Shape inStrides = stridesOf(x.getShape()), strides, shape;
  for (int64_t p : perm) {
    shape.push_back(x.getDim(p));
    strides.push_back(inStrides[p]);
  }
  return gatherStrided(x, shape, strides, 0);
}

Tensor weft::exec::transposeBackward(const Tensor &dy,
                                     llvm::ArrayRef<int64_t> perm) {
  Shape inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  return transpose(dy, inverse);
}

Tensor weft::exec::concat(llvm::ArrayRef<const Tensor *> inputs, int64_t axis) {
  Shape shape(inputs[0]->getShape().begin(), inputs[0]->getShape().end());
  shape[axis] = 0;
  for (const Tensor *t : inputs)
    shape[axis] += t->getDim(axis);
  ElementType type =
      inputs[0]->isFloat() ? ElementType::F32 : inputs[0]->getElementType();
  Tensor out(type, shape);
  int64_t outer =
      numElementsOf(llvm::ArrayRef<int64_t>(shape).take_front(axis));
  int64_t inner =
      numElementsOf(llvm::ArrayRef<int64_t>(shape).drop_front(axis + 1));
  size_t elem = out.isFloat() ? sizeof(float) : sizeof(int64_t);
  char *o = rawData(out);
  int64_t outRow = shape[axis] * inner, at = 0;
  for (const Tensor *t : inputs) {
    int64_t row = t->getDim(axis) * inner;
    const char *in = rawData(*t).first;
    for (int64_t i = 0; i < outer; ++i)
      std::memcpy(o + (i * outRow + at) * elem, in + i * row * elem,
                  row * elem);
    at += row;
  }
  return out;
}

std::vector<Tensor> weft::exec::split(const Tensor &x, int64_t axis,
                                      llvm::ArrayRef<int64_t> sizes) {
  llvm::ArrayRef<int64_t> shape = x.getShape();
  int64_t outer = numElementsOf(shape.take_front(axis));
  int64_t inner = numElementsOf(shape.drop_front(axis + 1));
  auto [in, elem] = rawData(x);
  int64_t inRow = shape[axis] * inner, at = 0;
  std::vector<Tensor> pieces;
  for (int64_t size : sizes) {
    Shape s(shape.begin(), shape.end());
    s[axis] = size;
    Tensor piece(x.isFloat() ? ElementType::F32 : x.getElementType(), s);
    int64_t row = size * inner;
    char *o = rawData(piece);
    for (int64_t i = 0; i < outer; ++i)
      std::memcpy(o + i * row * elem, in + (i * inRow + at) * elem, row * elem);
    at += row;
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

Tensor weft::exec::slice(const Tensor &x, llvm::ArrayRef<int64_t> starts,
                         llvm::ArrayRef<int64_t> limits,
                         llvm::ArrayRef<int64_t> steps) {
  Shape inStrides = stridesOf(x.getShape()), strides, shape;
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) {
    int64_t extent = limits[d] > starts[d]
                         ? (limits[d] - starts[d] + steps[d] - 1) / steps[d]
                         : 0;
    shape.push_back(extent);
    strides.push_back(inStrides[d] * steps[d]);
    base += starts[d] * inStrides[d];
  }
  return gatherStrided(x, shape, strides, base);
}

Tensor weft::exec::sliceBackward(llvm::ArrayRef<int64_t> inputShape,
                                 const Tensor &dy,
                                 llvm::ArrayRef<int64_t> starts,
                                 llvm::ArrayRef<int64_t> steps) {
  Shape inStrides = stridesOf(inputShape);
  std::array<Shape, 1> strides{Shape(starts.size())};
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) {
    strides[0][d] = inStrides[d] * steps[d];
    base += starts[d] * inStrides[d];
  }
  Tensor dx(ElementType::F32, inputShape);
  float *o = dx.floats() + base;
  const float *g = dy.floats();
  forEachElement<1>(
      dy.getShape(), strides,
      [&](int64_t i, std::array<int64_t, 1> off) { o[off[0]] = g[i]; });
  return dx;
}
