//===- ConvTranspose.cpp - Transposed convolution as a conv's adjoint -----===//
//
// y = convT(x, W) is the adjoint of the convolution c(y) = conv2d(y, W) that
// maps the result's shape back to the input's: its forward scatters each
// input element times the kernel into the result (col2im), its input
// gradient is that convolution of dy, and its weight gradient the
// convolution's weight gradient with dy as the image and x as the result
// gradient.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/ConvTranspose.h"
#include "ConvGeometry.h"

using namespace weft::exec;

/// The convolution from `resultShape` to the input's shape.
static ConvGeometry adjointGeometry(llvm::ArrayRef<int64_t> inputShape,
                                    llvm::ArrayRef<int64_t> weightShape,
                                    llvm::ArrayRef<int64_t> resultShape,
                                    const Conv2dParams &params) {
  return ConvGeometry(resultShape, weightShape, params, inputShape[2],
                      inputShape[3]);
}

Tensor weft::exec::convTranspose2d(const Tensor &input, const Tensor &weight,
                                   const Tensor *bias,
                                   const ConvTranspose2dParams &params,
                                   llvm::ArrayRef<int64_t> resultShape) {
  ConvGeometry g =
      adjointGeometry(input.getShape(), weight.getShape(), resultShape, params);
  Tensor out(ElementType::F32, resultShape);
  convolveAdjoint(g, weight.floats(), input.floats(), out.floats());
  if (bias) {
    int64_t plane = g.h * g.w;
    for (int64_t ni = 0; ni < g.n; ++ni)
      for (int64_t ci = 0; ci < g.c; ++ci) {
        float *row = out.floats() + (ni * g.c + ci) * plane;
        for (int64_t j = 0; j < plane; ++j)
          row[j] += bias->floats()[ci];
      }
  }
  return out;
}

Conv2dGrads
weft::exec::convTranspose2dBackward(const Tensor &input, const Tensor &weight,
                                    bool hasBias, const Tensor &dResult,
                                    const ConvTranspose2dParams &params) {
  ConvGeometry g = adjointGeometry(input.getShape(), weight.getShape(),
                                   dResult.getShape(), params);
  Conv2dGrads grads{Tensor(ElementType::F32, input.getShape()),
                    Tensor(ElementType::F32, weight.getShape()), Tensor()};
  convolve(g, dResult.floats(), weight.floats(), grads.input.floats());
  convolveWeightGrad(g, dResult.floats(), input.floats(),
                     grads.weight.floats());
  if (!hasBias)
    return grads;
  grads.bias = Tensor(ElementType::F32, {g.c});
  int64_t plane = g.h * g.w;
  for (int64_t ci = 0; ci < g.c; ++ci) {
    double s = 0;
    for (int64_t ni = 0; ni < g.n; ++ni) {
      const float *row = dResult.floats() + (ni * g.c + ci) * plane;
      for (int64_t j = 0; j < plane; ++j)
        s += row[j];
    }
    grads.bias.floats()[ci] = float(s);
  }
  return grads;
}
