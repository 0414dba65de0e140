//===- Loss.h - Cross-entropy and negative log-likelihood -------*- C++ -*-===//

#ifndef WEFT_EXEC_LOSS_H
#define WEFT_EXEC_LOSS_H

#include "weft/Exec/Tensor.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace weft::exec {

enum class LossReduction { Mean, Sum };
std::optional<LossReduction> parseLossReduction(llvm::StringRef name);

struct LossParams {
  LossReduction reduction = LossReduction::Mean;
  /// Labels equal to this contribute nothing and do not count in the mean.
  std::optional<int64_t> ignoreIndex;
};

/// Softmax cross-entropy of N×C×… logits (class dimension 1) against
/// labels N×… in [0, C) (checked by the caller), reduced to a scalar. A
/// mean over zero counted labels is NaN, as in PyTorch.
Tensor crossEntropy(const Tensor &logits, const Tensor &labels,
                    const LossParams &params);
/// The same loss in double precision (it is accumulated in double; the
/// tensor rounds it to f32). Finite differences of the loss need it.
double crossEntropyValue(const Tensor &logits, const Tensor &labels,
                         const LossParams &params);
/// The logits' gradient given the scalar loss gradient `dLoss`.
Tensor crossEntropyBackward(const Tensor &logits, const Tensor &labels,
                            float dLoss, const LossParams &params);

/// −Σ input[n, label_n, …] (input holds log-probabilities), reduced.
Tensor nllLoss(const Tensor &logProbs, const Tensor &labels,
               const LossParams &params);
double nllLossValue(const Tensor &logProbs, const Tensor &labels,
                    const LossParams &params);
Tensor nllLossBackward(llvm::ArrayRef<int64_t> inputShape, const Tensor &labels,
                       float dLoss, const LossParams &params);

} // namespace weft::exec

#endif // WEFT_EXEC_LOSS_H
