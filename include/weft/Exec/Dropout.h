//===- Dropout.h - Dropout keyed by global element index ---------*- C++
//-*-===//

#ifndef WEFT_EXEC_DROPOUT_H
#define WEFT_EXEC_DROPOUT_H

#include "weft/Exec/Tensor.h"

namespace weft::exec {

/// Where a (possibly sharded) tensor sits in the whole one: an element at
/// local index i has global coordinates i + offsets in `globalShape`. Empty
/// fields mean "the tensor is the whole".
struct GlobalView {
  llvm::ArrayRef<int64_t> globalShape;
  llvm::ArrayRef<int64_t> offsets;
};

/// The scaled keep mask: element e is 1/(1 − ratio) when
/// uniform01(seed, mix64(opId), global index of e) ≥ ratio, else 0. Every
/// device of a distributed run thus draws the single-device mask.
Tensor dropoutMask(llvm::ArrayRef<int64_t> shape, double ratio, uint64_t seed,
                   uint64_t opId, GlobalView view = {});

/// x ⊙ mask; the backward is dy ⊙ mask (the mask is recomputed).
Tensor dropout(const Tensor &x, double ratio, uint64_t seed, uint64_t opId,
               GlobalView view = {});

} // namespace weft::exec

#endif // WEFT_EXEC_DROPOUT_H
