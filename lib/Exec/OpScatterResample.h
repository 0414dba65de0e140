//===- OpScatterResample.h - Dispatch of scatters and resampling -*- C++
//-*-===//
//
// Private to lib/Exec: the forward and backward of conv_transpose2d,
// resize, scatter_elements and scatter_nd, called by OpForward.cpp and
// OpBackward.cpp for those ops.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_OPSCATTERRESAMPLE_H
#define WEFT_LIB_EXEC_OPSCATTERRESAMPLE_H

#include "weft/Exec/OpKernels.h"

namespace weft::exec {

llvm::Error scatterResampleForward(mlir::Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands,
                                   const OpContext &ctx,
                                   llvm::SmallVectorImpl<Tensor> &results);

llvm::Error scatterResampleBackward(mlir::Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::ArrayRef<const Tensor *> results,
                                    llvm::ArrayRef<const Tensor *> resultGrads,
                                    const OpContext &ctx,
                                    llvm::SmallVectorImpl<Tensor> &grads);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_OPSCATTERRESAMPLE_H
