//===- BridgedTypes.h - Output types of bridged multi-output ops -*- C++
//-*-===//
//
// Ops newer than opset 17 whose outputs are not shaped like their first
// input (Attention, CausalConvWithState, LinearAttention, and GridSample's
// n-d form of opset 20) are unknown to the linked opset-17 shape inference. The
// opset bridge (OpsetBridge.h) types their outputs from their inputs' static
// types, so inference continues past them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_BRIDGEDTYPES_H
#define WEFT_LIB_IMPORT_BRIDGEDTYPES_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <vector>

namespace weft::import {

/// The static types of a node's inputs by name (null when unknown).
using InputTypes = llvm::function_ref<const onnx::TypeProto *(llvm::StringRef)>;
/// One entry per node output; empty when the inputs do not determine it.
using OutputTypes = std::vector<std::optional<onnx::TypeProto>>;

/// Whether the bridge types `op`'s outputs with bridgedOutputTypes.
bool hasBridgedOutputTypes(llvm::StringRef op);

/// The types of the outputs of a node whose op hasBridgedOutputTypes.
OutputTypes bridgedOutputTypes(const onnx::NodeProto &node, InputTypes typeOf);

/// The static dims of a tensor type, or none.
std::optional<std::vector<int64_t>> staticDims(const onnx::TypeProto *type);

/// A tensor type of ONNX element type `element` and static `dims`.
onnx::TypeProto tensorTypeOf(int32_t element, llvm::ArrayRef<int64_t> dims);

/// The type of input `i` of `node` (null when absent or unknown).
const onnx::TypeProto *inputType(const onnx::NodeProto &node, int i,
                                 InputTypes typeOf);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_BRIDGEDTYPES_H
