//===- Norm.h - Layer and batch normalisation --------------------*- C++
//-*-===//

#ifndef WEFT_EXEC_NORM_H
#define WEFT_EXEC_NORM_H

#include "weft/Exec/Tensor.h"

namespace weft::exec {

/// Gradients of a normalisation's input and affine parameters.
struct NormGrads {
  Tensor input, scale, bias;
};

/// Normalises over the dimensions from `axis` (non-negative) to the last,
/// with the biased variance, then applies `scale` and `bias` (which hold
/// one value per normalised element).
Tensor layerNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 int64_t axis, double epsilon);
/// Recomputes the statistics from `x`.
NormGrads layerNormBackward(const Tensor &x, const Tensor &scale,
                            const Tensor &dy, int64_t axis, double epsilon);

/// Batch normalisation of N×C×… per channel. Training: the statistics of
/// the batch (biased variance, as PyTorch normalises); otherwise the
/// running statistics. Running statistics are not updated.
Tensor batchNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 const Tensor &runningMean, const Tensor &runningVar,
                 double epsilon, bool training);
NormGrads batchNormBackward(const Tensor &x, const Tensor &scale,
                            const Tensor &runningMean, const Tensor &runningVar,
                            const Tensor &dy, double epsilon, bool training);

} // namespace weft::exec

#endif // WEFT_EXEC_NORM_H
