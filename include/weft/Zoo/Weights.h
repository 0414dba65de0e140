//===- Weights.h - Parameters as graph inputs or initializers ---*- C++ -*-===//

#ifndef WEFT_ZOO_WEIGHTS_H
#define WEFT_ZOO_WEIGHTS_H

#include "weft/Zoo/GraphBuilder.h"
#include "weft/Zoo/ZooModel.h"

namespace weft {
namespace zoo {

/// Scalars in one parameter.
uint64_t numElements(const ParamInfo &param);

/// Scalars in all parameters.
uint64_t countParameters(llvm::ArrayRef<ParamInfo> params);

/// Adds the parameters to `model`: graph inputs (weightless) or seeded
/// random float initializers (`withWeights`). Either way their names are
/// listed, comma-separated, under the metadata key `weft.parameters`.
void attachParameters(onnx::ModelProto &model, llvm::ArrayRef<ParamInfo> params,
                      bool withWeights, uint64_t seed);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_WEIGHTS_H
