//===- Conv.h - 2-D convolution (NCHW, OIHW) ---------------------*- C++
//-*-===//

#ifndef WEFT_EXEC_CONV_H
#define WEFT_EXEC_CONV_H

#include "weft/Exec/Tensor.h"
#include <array>

namespace weft::exec {

struct Conv2dParams {
  std::array<int64_t, 2> strides{1, 1};
  /// [top, left, bottom, right].
  std::array<int64_t, 4> pads{0, 0, 0, 0};
  std::array<int64_t, 2> dilations{1, 1};
  int64_t group = 1;
};

/// ONNX Conv on N×C×H×W with weights O×(C/group)×KH×KW and an optional bias
/// of O elements (pass nullptr for none); im2col + Eigen GEMM.
Tensor conv2d(const Tensor &input, const Tensor &weight, const Tensor *bias,
              const Conv2dParams &params);

struct Conv2dGrads {
  Tensor input, weight, bias;
};
/// Gradients of input, weight and (when `hasBias`) bias.
Conv2dGrads conv2dBackward(const Tensor &input, const Tensor &weight,
                           bool hasBias, const Tensor &dResult,
                           const Conv2dParams &params);

} // namespace weft::exec

#endif // WEFT_EXEC_CONV_H
