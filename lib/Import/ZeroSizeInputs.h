//===- ZeroSizeInputs.h - Inputs with explicit zero-size dims ----*- C++
//-*-===//
//
// A dim_value of 0 is a real size (an empty tensor). Resolving input shapes
// binds the batch and --input-shape to dims that are not positive; an
// input with a zero dim is therefore given its whole shape here, as if by
// --input-shape, before that step.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_ZEROSIZEINPUTS_H
#define WEFT_LIB_IMPORT_ZEROSIZEINPUTS_H

#include "onnx/onnx_pb.h"
#include "weft/Import/OnnxImport.h"

namespace weft::import {

/// `options` with an input shape for every data input that declares a dim
/// of 0 and is not named by --input-shape: its declared dims, a symbolic
/// dim 0 bound to the batch (setting `report.batchSymbolic`). Any other
/// symbolic dim of such an input is an error naming it.
llvm::Expected<ImportOptions> withZeroSizeInputs(const onnx::ModelProto &model,
                                                 const ImportOptions &options,
                                                 ImportReport &report);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_ZEROSIZEINPUTS_H
