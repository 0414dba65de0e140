//===- Movement.h - Transpose, concat, split, slice, gathers ----*- C++ -*-===//
//
// Data movement works on float and integer tensors alike; backward
// functions take and return float gradients. Reshape and flatten are
// Tensor::reshaped.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_MOVEMENT_H
#define WEFT_EXEC_MOVEMENT_H

#include "weft/Exec/Tensor.h"
#include <vector>

namespace weft::exec {

/// Result dimension i is input dimension perm[i].
Tensor transpose(const Tensor &x, llvm::ArrayRef<int64_t> perm);
Tensor transposeBackward(const Tensor &dy, llvm::ArrayRef<int64_t> perm);

Tensor concat(llvm::ArrayRef<const Tensor *> inputs, int64_t axis);
/// Consecutive pieces of `sizes` along `axis` (the backward of concat).
std::vector<Tensor> split(const Tensor &x, int64_t axis,
                          llvm::ArrayRef<int64_t> sizes);

/// Elements starts[d], starts[d] + steps[d], ... below limits[d] (steps > 0).
Tensor slice(const Tensor &x, llvm::ArrayRef<int64_t> starts,
             llvm::ArrayRef<int64_t> limits, llvm::ArrayRef<int64_t> steps);
/// Zeros of `inputShape` with `dy` scattered into the sliced positions.
Tensor sliceBackward(llvm::ArrayRef<int64_t> inputShape, const Tensor &dy,
                     llvm::ArrayRef<int64_t> starts,
                     llvm::ArrayRef<int64_t> steps);

/// ONNX Gather: `indices` (in [−dim, dim), checked by the caller) replace
/// dimension `axis` of `data`.
Tensor gather(const Tensor &data, const Tensor &indices, int64_t axis);
/// Scatter-adds `dy` into zeros of `dataShape` (the embedding gradient).
Tensor gatherBackward(llvm::ArrayRef<int64_t> dataShape, const Tensor &indices,
                      const Tensor &dy, int64_t axis);

/// ONNX GatherElements: the result has the shape of `indices` (the data's
/// rank, no larger in any dim but `axis`); element p is data at p with its
/// `axis` coordinate replaced by indices[p] (in [−dim, dim), checked by the
/// caller).
Tensor gatherElements(const Tensor &data, const Tensor &indices, int64_t axis);
/// Scatter-adds `dy` into zeros of `dataShape` at the positions read.
Tensor gatherElementsBackward(llvm::ArrayRef<int64_t> dataShape,
                              const Tensor &indices, const Tensor &dy,
                              int64_t axis);

} // namespace weft::exec

#endif // WEFT_EXEC_MOVEMENT_H
