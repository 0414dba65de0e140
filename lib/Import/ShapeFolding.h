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

#include "ConstTensor.h"
#include "onnx/onnx_pb.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weft::import {

/// Whether an initializer is a constant of the model (a shape, axes or a
/// scalar) rather than a parameter or buffer.
bool isConstantInitializer(const onnx::TensorProto &tensor);

/// Whether folding `node` on `inputs` would expand a few values into a
/// tensor of more than 64 elements (the largest constant initializer): a
/// ConstantOfShape (weights may be given that way) or an Expand. Those are
/// not folded; the importer emits a splat graph.constant or a graph.expand,
/// so a 9 KB model does not become gigabytes of doubles.
bool foldWouldExpand(const onnx::NodeProto &node,
                     llvm::ArrayRef<const ConstTensor *> inputs);

/// The dims of a value whose recorded shape is fully static; std::nullopt
/// for no shape or a symbolic dim.
std::optional<std::vector<int64_t>>
staticDims(const onnx::ValueInfoProto &value);

/// Runs ONNX shape inference (with data propagation) on `model`.
llvm::Error inferShapes(onnx::ModelProto &model);

/// Folds shape computations into Constant nodes and re-infers shapes.
/// Returns the number of nodes folded. Float initializers named in `frozen`
/// (--frozen) with at most 64 elements are constants too: they are not
/// trained, so what is computed from them alone folds (a rotary
/// embedding's inverse frequencies, a buffer the dynamo exporter writes as
/// an initializer, become its cos and sin tables).
llvm::Expected<unsigned>
foldShapeComputations(onnx::ModelProto &model,
                      const std::set<std::string> &frozen = {});

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_SHAPEFOLDING_H
