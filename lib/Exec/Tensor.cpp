//===- Tensor.cpp - Dense tensors of the reference interpreter ------------===//

#include "weft/Exec/Tensor.h"
#include "llvm/Support/raw_ostream.h"
#include <cassert>
#include <cmath>
#include <cstring>

using namespace weft::exec;

int64_t weft::exec::numElementsOf(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape weft::exec::stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::string weft::exec::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return os.str();
}

Tensor::Tensor(ElementType type, llvm::ArrayRef<int64_t> shape)
    : type(type), valid(true), shape(shape.begin(), shape.end()),
      numElements(numElementsOf(shape)) {
  if (isFloatType(type))
    floatData.assign(numElements, 0.0f);
  else
    intData.assign(numElements, 0);
}

Tensor Tensor::fromFloats(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<float> values) {
  Tensor t(ElementType::F32, shape);
  assert(int64_t(values.size()) == t.numElements && "wrong number of values");
  std::copy(values.begin(), values.end(), t.floatData.begin());
  return t;
}

Tensor Tensor::fromInts(llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> values, ElementType type) {
  assert(!isFloatType(type) && "expected an integer type");
  Tensor t(type, shape);
  assert(int64_t(values.size()) == t.numElements && "wrong number of values");
  std::copy(values.begin(), values.end(), t.intData.begin());
  return t;
}

Tensor Tensor::filled(llvm::ArrayRef<int64_t> shape, float value) {
  Tensor t(ElementType::F32, shape);
  std::fill(t.floatData.begin(), t.floatData.end(), value);
  return t;
}

Tensor Tensor::reshaped(llvm::ArrayRef<int64_t> newShape) const {
  assert(numElementsOf(newShape) == numElements && "reshape changes size");
  Tensor t = *this;
  t.shape.assign(newShape.begin(), newShape.end());
  return t;
}

float weft::exec::roundToBF16(float x) {
  if (std::isnan(x))
    return x;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  float y;
  std::memcpy(&y, &bits, 4);
  return y;
}

float weft::exec::roundToF16(float x) { return float(_Float16(x)); }

void Tensor::convertTo(ElementType newType) {
  if (newType == type)
    return;
  bool wasFloat = isFloatType(type);
  bool toFloat = isFloatType(newType);
  if (wasFloat && !toFloat) {
    intData.resize(numElements);
    for (int64_t i = 0; i < numElements; ++i)
      intData[i] = newType == ElementType::I1 ? floatData[i] != 0.0f
                                              : int64_t(floatData[i]);
    floatData.clear();
  } else if (!wasFloat && toFloat) {
    floatData.resize(numElements);
    for (int64_t i = 0; i < numElements; ++i)
      floatData[i] = float(intData[i]);
    intData.clear();
  } else if (newType == ElementType::I1) {
    for (int64_t &v : intData)
      v = v != 0;
  }
  type = newType;
  if (newType == ElementType::BF16)
    for (float &v : floatData)
      v = roundToBF16(v);
  else if (newType == ElementType::F16)
    for (float &v : floatData)
      v = roundToF16(v);
}
