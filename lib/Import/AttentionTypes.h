//===- AttentionTypes.h - Output types of a bridged Attention ----*- C++
//-*-===//
//
// Attention (opset 23 and later) is unknown to the linked opset-17 shape
// inference, so the opset bridge (OpsetBridge.h) types its outputs from its
// inputs' static types, for the ops after it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_ATTENTIONTYPES_H
#define WEFT_LIB_IMPORT_ATTENTIONTYPES_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <vector>

namespace weft::import {

/// The types of an Attention node's outputs (Y, present_key, present_value,
/// qk_matmul_output; as many as the node has), derived from the static
/// types `typeOf` gives its inputs (null when unknown). An entry is empty
/// when the inputs do not determine it.
std::vector<std::optional<onnx::TypeProto>> attentionOutputTypes(
    const onnx::NodeProto &node,
    llvm::function_ref<const onnx::TypeProto *(llvm::StringRef)> typeOf);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_ATTENTIONTYPES_H
