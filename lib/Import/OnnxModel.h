//===- OnnxModel.h - Reading and checking an ONNX model ----------*- C++
//-*-===//
//
// Private to lib/Import: loads a model, resolves its input shapes, and runs
// ONNX's own checker and shape inference on it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_ONNXMODEL_H
#define WEFT_LIB_IMPORT_ONNXMODEL_H

#include "onnx/onnx_pb.h"
#include "weft/Import/OnnxImport.h"
#include "llvm/ADT/StringSet.h"

namespace weft::import {

/// The metadata key listing the parameters of a weightless model.
inline constexpr const char *kParametersKey = "weft.parameters";

/// An ONNX message on one line: its lines joined by "; ", without the
/// textual parser's "Error context:" line (it quotes the raw input). The
/// checker and shape inference end messages with "==> Context: …" lines.
std::string oneLine(llvm::StringRef message);

/// Reads `path` (binary or `.onnxtext`) into `model`.
llvm::Error readOnnxModel(llvm::StringRef path, onnx::ModelProto &model);

/// The names a weightless model lists as parameters (graph inputs that are
/// parameters, not data).
llvm::StringSet<> listedParameters(const onnx::ModelProto &model);

/// Gives every data input a static shape (batch and --input-shape), then
/// runs ONNX's checker and shape inference (with data propagation, so shape
/// computations of training-mode exports resolve). External data files are
/// read (next to `modelPath`) only with `options.withWeights`.
llvm::Error prepareOnnxModel(onnx::ModelProto &model,
                             const ImportOptions &options, ImportReport &report,
                             llvm::StringRef modelPath);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_ONNXMODEL_H
