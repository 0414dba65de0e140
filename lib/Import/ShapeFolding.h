//===- ShapeFolding.h - Folding shape logic before shape inference -*- C++
//-*-===//
//
// Training-mode exports compute reshape targets and slice bounds at run time
// (Shape → Gather → Unsqueeze → Concat → …). ONNX's shape inference cannot
// see through all of them, so this pass folds every such computation whose
// inputs are known into a Constant node and re-runs inference, until nothing
// changes.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_SHAPEFOLDING_H
#define WEFT_LIB_IMPORT_SHAPEFOLDING_H

#include "onnx/onnx_pb.h"
#include "llvm/Support/Error.h"

namespace weft::import {

/// Whether an initializer is a constant of the model (a shape, axes or a
/// scalar) rather than a parameter or buffer.
bool isConstantInitializer(const onnx::TensorProto &tensor);

/// Runs ONNX shape inference (with data propagation) on `model`.
llvm::Error inferShapes(onnx::ModelProto &model);

/// Folds shape computations into Constant nodes and re-infers shapes.
/// Returns the number of nodes folded.
llvm::Expected<unsigned> foldShapeComputations(onnx::ModelProto &model);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_SHAPEFOLDING_H
