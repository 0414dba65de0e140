//===- ConvGeometry.h - im2col geometry of a 2-d convolution -----*- C++
//-*-===//
//
// Private to lib/Exec: the sizes of one convolution and the three GEMM
// passes conv2d and conv_transpose2d are built from (a convolution, the
// adjoint that scatters into its input, and the weight's correlation).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_CONVGEOMETRY_H
#define WEFT_LIB_EXEC_CONVGEOMETRY_H

#include "weft/Exec/Conv.h"

namespace weft::exec {

/// A convolution of an N×C×H×W image with O×(C/groups)×KH×KW weights into
/// N×O×OH×OW.
struct ConvGeometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups, cg, og;
  Conv2dParams p;

  /// OH and OW from the window formula.
  ConvGeometry(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> wt,
               const Conv2dParams &params);
  /// OH and OW given (a transposed convolution's output padding may leave
  /// rows no window reaches).
  ConvGeometry(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> wt,
               const Conv2dParams &params, int64_t outH, int64_t outW);

  int64_t colRows() const { return cg * kh * kw; }
  int64_t colCols() const { return oh * ow; }

  /// Calls fn(colIndex, imageIndex or −1 for padding) for each element of
  /// the im2col matrix of the channels [c0, c0 + cg) of one image.
  template <typename Fn> void forEachCol(Fn fn) const {
    int64_t idx = 0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < kh; ++ki)
        for (int64_t kj = 0; kj < kw; ++kj)
          for (int64_t y = 0; y < oh; ++y) {
            int64_t iy = y * p.strides[0] - p.pads[0] + ki * p.dilations[0];
            for (int64_t x = 0; x < ow; ++x, ++idx) {
              int64_t ix = x * p.strides[1] - p.pads[1] + kj * p.dilations[1];
              bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
              fn(idx, inside ? (ci * h + iy) * w + ix : int64_t(-1));
            }
          }
  }
};

/// result (N×O×OH×OW, overwritten) = the convolution of `input` with
/// `weight`, no bias.
void convolve(const ConvGeometry &g, const float *input, const float *weight,
              float *result);
/// dInput (N×C×H×W, accumulated into) += the adjoint of the convolution
/// applied to dResult: each dResult element times the kernel, scattered
/// into the window it came from.
void convolveAdjoint(const ConvGeometry &g, const float *weight,
                     const float *dResult, float *dInput);
/// dWeight (O×C/g×KH×KW, accumulated into) += the correlation of `input`
/// with dResult.
void convolveWeightGrad(const ConvGeometry &g, const float *input,
                        const float *dResult, float *dWeight);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_CONVGEOMETRY_H
