//===- ZooModel.h - Zoo models as ONNX ModelProtos --------------*- C++ -*-===//
//
// The ONNX-facing half of the zoo. Including this pulls in ONNX and protobuf
// headers; code that only writes files should include Zoo.h instead.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ZOO_ZOOMODEL_H
#define WEFT_ZOO_ZOOMODEL_H

#include "onnx/onnx_pb.h"
#include "weft/Support/ExitCodes.h"
#include "weft/Zoo/Zoo.h"

namespace weft {
namespace zoo {

/// The metadata_props key listing a weightless model's parameters.
constexpr const char *kParametersKey = "weft.parameters";

/// Builds the model, runs ONNX's checker and shape inference, and verifies
/// that every node output carries a full shape in value_info. Failures of the
/// checker are internal errors (the zoo made a bad model).
llvm::Expected<onnx::ModelProto> buildZooModel(const ZooOptions &options);

/// Runs ONNX's checker and strict shape inference (with data propagation) on
/// `model`, converting ONNX's exceptions into errors with `code`.
llvm::Error checkAndInferShapes(onnx::ModelProto &model, ExitCode code);

/// Verifies every node output of `model` has value_info with a known rank and
/// every dim either a value or a named symbol (no `unk__` dims).
llvm::Error verifyFullShapes(const onnx::ModelProto &model);

/// The names listed in `weft.parameters`, in order (empty if absent).
std::vector<std::string> listedParameters(const onnx::ModelProto &model);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_ZOOMODEL_H
