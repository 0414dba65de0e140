//===- SpmdRecipes.h - The special recipes' families ------------*- C++ -*-===//
//
// specialForward / specialBackward (SpmdRecipes.cpp) check a step's shards
// and dispatch to one family of recipes: the normalisations, whose devices
// all-reduce statistics (SpmdNormRecipes.cpp), and the recipes that need a
// shard's global offset or the global element count (SpmdLossRecipes.cpp).
// This header declares the families and the few helpers they share; it is
// private to lib/Exec.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_SPMDRECIPES_H
#define WEFT_LIB_EXEC_SPMDRECIPES_H

#include "weft/Exec/SpmdKernels.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace weft::exec::recipes {

/// Per device, statistics in double (one vector per device).
using Stats = std::vector<std::vector<double>>;

/// The product of `s[from, to)` (dims past the rank count as 1).
int64_t prod(llvm::ArrayRef<int64_t> s, size_t from, size_t to);

/// A float result with the declared element type of result `r`.
Tensor finish(Tensor t, mlir::Operation *op, unsigned r);

/// Row maxima and log-sum-exps of operand 0 over `axis` (split over
/// `axes`), all-reduced (softmax and cross_entropy over split classes).
void softmaxStats(const spmd::ShardGeometry &geo, const DeviceTensors &in,
                  int64_t axis, spmd::MeshAxes axes, Stats &maxima, Stats &lse);

// Normalisations over split dims (SpmdNormRecipes.cpp).

void splitSoftmaxForward(LocalStep &step, const spmd::ShardGeometry &geo,
                         const DeviceTensors &in,
                         std::vector<llvm::SmallVector<Tensor, 2>> &out,
                         bool log);
void splitSoftmaxBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                          const DeviceTensors &in, const DeviceTensors &res,
                          const DeviceTensors &dres,
                          std::vector<llvm::SmallVector<Tensor, 4>> &din,
                          bool log);
void splitLayerNormForward(LocalStep &step, const spmd::ShardGeometry &geo,
                           const DeviceTensors &in,
                           std::vector<llvm::SmallVector<Tensor, 2>> &out);
void splitLayerNormBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                            const DeviceTensors &in, const DeviceTensors &dres,
                            std::vector<llvm::SmallVector<Tensor, 4>> &din);
void syncBatchNormForward(LocalStep &step, const spmd::ShardGeometry &geo,
                          const DeviceTensors &in,
                          std::vector<llvm::SmallVector<Tensor, 2>> &out);
void syncBatchNormBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                           const DeviceTensors &in, const DeviceTensors &dres,
                           std::vector<llvm::SmallVector<Tensor, 4>> &din);

// Global offsets and counts (SpmdLossRecipes.cpp).

llvm::Error lossForward(LocalStep &step, const spmd::ShardGeometry &geo,
                        const DeviceTensors &in,
                        std::vector<llvm::SmallVector<Tensor, 2>> &out);
llvm::Error lossBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                         const DeviceTensors &in, const DeviceTensors &dres,
                         std::vector<llvm::SmallVector<Tensor, 4>> &din);
void gatherVocabForward(LocalStep &step, const spmd::ShardGeometry &geo,
                        const DeviceTensors &in,
                        std::vector<llvm::SmallVector<Tensor, 2>> &out);
void gatherVocabBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                         const DeviceTensors &in, const DeviceTensors &dres,
                         std::vector<llvm::SmallVector<Tensor, 4>> &din);
void reduceMeanForward(LocalStep &step, const spmd::ShardGeometry &geo,
                       const DeviceTensors &in,
                       std::vector<llvm::SmallVector<Tensor, 2>> &out);
void reduceMeanBackward(LocalStep &step, const spmd::ShardGeometry &geo,
                        const DeviceTensors &in, const DeviceTensors &res,
                        const DeviceTensors &dres,
                        std::vector<llvm::SmallVector<Tensor, 4>> &din);

} // namespace weft::exec::recipes

#endif // WEFT_LIB_EXEC_SPMDRECIPES_H
