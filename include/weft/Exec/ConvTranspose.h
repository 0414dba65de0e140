//===- ConvTranspose.h - 2-D transposed convolution --------------*- C++
//-*-===//

#ifndef WEFT_EXEC_CONVTRANSPOSE_H
#define WEFT_EXEC_CONVTRANSPOSE_H

#include "weft/Exec/Conv.h"

namespace weft::exec {

/// The convolution a transposed convolution is the adjoint of: strides,
/// pads, dilations and groups as in conv2d, between the result (the
/// convolution's input) and the input (its output).
using ConvTranspose2dParams = Conv2dParams;

/// ONNX ConvTranspose on N×C×H×W with weights C×(O/group)×KH×KW and an
/// optional bias of O elements (nullptr for none), into a result of
/// `resultShape` (N×O×OH×OW; the output padding is what the window
/// formula leaves over).
Tensor convTranspose2d(const Tensor &input, const Tensor &weight,
                       const Tensor *bias, const ConvTranspose2dParams &params,
                       llvm::ArrayRef<int64_t> resultShape);

/// Gradients of input (a conv2d of dResult with the same weight), weight
/// and (when `hasBias`) bias.
Conv2dGrads convTranspose2dBackward(const Tensor &input, const Tensor &weight,
                                    bool hasBias, const Tensor &dResult,
                                    const ConvTranspose2dParams &params);

} // namespace weft::exec

#endif // WEFT_EXEC_CONVTRANSPOSE_H
