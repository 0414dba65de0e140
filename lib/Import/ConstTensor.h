//===- ConstTensor.h - Small constant tensors for shape folding --*- C++
//-*-===//
//
// Training-mode exports compute reshape targets at run time (Shape → Gather →
// Unsqueeze → Concat → Reshape). With static shapes these are constants; the
// importer folds them with the few kernels below instead of emitting them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_CONSTTENSOR_H
#define WEFT_LIB_IMPORT_CONSTTENSOR_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <vector>

namespace weft::import {

/// A constant tensor with values held as doubles (exact for the int64 shape
/// arithmetic it serves) and its ONNX element type.
struct ConstTensor {
  int32_t elementType = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::vector<double> values;

  int64_t numElements() const;
  bool isInteger() const;
  /// The values as int64 (truncated).
  std::vector<int64_t> asInts() const;
};

/// Reads an initializer or Constant's tensor; std::nullopt if its data is
/// external or its type is not one the folder handles.
std::optional<ConstTensor> readTensor(const onnx::TensorProto &tensor);

/// Whether `opType` is a shape computation the folder can evaluate.
bool isFoldable(llvm::StringRef opType);

/// Evaluates `node` on constant inputs (nullptr for absent optional inputs).
/// `inputShapes` gives the static shape of every input (for Shape).
llvm::Expected<std::vector<ConstTensor>>
foldNode(const onnx::NodeProto &node,
         llvm::ArrayRef<const ConstTensor *> inputs,
         llvm::ArrayRef<std::vector<int64_t>> inputShapes);

/// Transpose and GatherElements of constants (ConstTensorMoves.cpp).
llvm::Expected<ConstTensor> foldTranspose(const onnx::NodeProto &node,
                                          const ConstTensor &data);
llvm::Expected<ConstTensor> foldGatherElements(const onnx::NodeProto &node,
                                               const ConstTensor &data,
                                               const ConstTensor &indices);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_CONSTTENSOR_H
