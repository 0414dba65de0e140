//===- Resize.h - Nearest, linear and cubic resampling -----------*- C++
//-*-===//

#ifndef WEFT_EXEC_RESIZE_H
#define WEFT_EXEC_RESIZE_H

#include "weft/Exec/Tensor.h"
#include <string>
#include <vector>

namespace weft::exec {

/// The attributes of graph.resize (ONNX Resize).
struct ResizeParams {
  std::string mode = "nearest";
  std::string coordinateMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  /// One per dim.
  std::vector<double> scales;
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};

/// The interpolation along one dim: result index j reads the input indices
/// index[j·taps + t] with weights weight[j·taps + t] (t < taps).
struct ResizeTaps {
  int64_t taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

/// The taps of one dim of input extent `in`, result extent `out` and
/// `scale`, as ONNX's reference computes them (clamped to the edge).
ResizeTaps resizeTaps(int64_t in, int64_t out, double scale,
                      const ResizeParams &params);

/// Resamples `x` to `resultShape`, one dim at a time; dims whose scale is
/// 1 and whose extent is unchanged are copied.
Tensor resize(const Tensor &x, const ResizeParams &params,
              llvm::ArrayRef<int64_t> resultShape);
/// The adjoint: each element of dy added into the input elements its
/// value was interpolated from, with the same weights.
Tensor resizeBackward(llvm::ArrayRef<int64_t> inputShape, const Tensor &dy,
                      const ResizeParams &params);

} // namespace weft::exec

#endif // WEFT_EXEC_RESIZE_H
