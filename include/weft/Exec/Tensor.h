//===- Tensor.h - Dense tensors of the reference interpreter -----*- C++
//-*-===//
//
// A Tensor is a shape plus contiguous row-major data. Floating-point tensors
// hold `float` values; bf16 and fp16 tensors hold `float` values that are
// representable in the narrower format (rounded after every op, emulating
// mixed precision). Integer (i32/i64) and boolean (i1) tensors hold int64_t.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_TENSOR_H
#define WEFT_EXEC_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <string>
#include <vector>

namespace weft::exec {

enum class ElementType : uint8_t { F32, BF16, F16, I64, I1 };

/// Whether values of `type` are stored as floats.
inline bool isFloatType(ElementType type) {
  return type == ElementType::F32 || type == ElementType::BF16 ||
         type == ElementType::F16;
}

using Shape = llvm::SmallVector<int64_t, 4>;

/// Number of elements of a tensor of `shape` (1 for a scalar).
int64_t numElementsOf(llvm::ArrayRef<int64_t> shape);
/// Row-major strides of `shape`, in elements.
Shape stridesOf(llvm::ArrayRef<int64_t> shape);
/// "[2, 3, 4]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

class Tensor {
public:
  /// An invalid (absent) tensor, e.g. the gradient of an integer operand.
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(ElementType type, llvm::ArrayRef<int64_t> shape);

  static Tensor zeros(llvm::ArrayRef<int64_t> shape) {
    return Tensor(ElementType::F32, shape);
  }
  static Tensor fromFloats(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<float> values);
  static Tensor fromInts(llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<int64_t> values,
                         ElementType type = ElementType::I64);
  static Tensor scalar(float value) { return fromFloats({}, {value}); }
  /// A float tensor of `shape` filled with `value`.
  static Tensor filled(llvm::ArrayRef<int64_t> shape, float value);

  bool isValid() const { return valid; }
  ElementType getElementType() const { return type; }
  bool isFloat() const { return isFloatType(type); }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  int64_t getDim(int64_t d) const { return shape[d]; }
  int64_t getNumElements() const { return numElements; }

  /// The storage. Never null, also for a tensor of no elements (a device
  /// may hold an empty shard): kernels may offset it and pass it to memcpy
  /// with a size of zero.
  float *floats() { return floatData.empty() ? &noFloat : floatData.data(); }
  const float *floats() const {
    return floatData.empty() ? &noFloat : floatData.data();
  }
  int64_t *ints() { return intData.empty() ? &noInt : intData.data(); }
  const int64_t *ints() const {
    return intData.empty() ? &noInt : intData.data();
  }
  llvm::ArrayRef<float> floatValues() const { return floatData; }
  llvm::ArrayRef<int64_t> intValues() const { return intData; }

  /// The element at flat index `i` as a double, whatever the storage.
  double at(int64_t i) const {
    return isFloat() ? double(floatData[i]) : double(intData[i]);
  }

  /// The same elements with another shape of equal size.
  Tensor reshaped(llvm::ArrayRef<int64_t> newShape) const;
  /// Retags the element type; float values are rounded to bf16/fp16 when
  /// the new type is narrower, integer values to 0/1 for i1.
  void convertTo(ElementType newType);

private:
  ElementType type = ElementType::F32;
  bool valid = false;
  Shape shape;
  int64_t numElements = 0;
  std::vector<float> floatData;
  std::vector<int64_t> intData;
  /// What floats() and ints() point to when there is no storage.
  static inline float noFloat = 0;
  static inline int64_t noInt = 0;
};

/// Rounds a float to the nearest bf16 / fp16 value (round to nearest even),
/// returned as a float.
float roundToBF16(float x);
float roundToF16(float x);

} // namespace weft::exec

#endif // WEFT_EXEC_TENSOR_H
