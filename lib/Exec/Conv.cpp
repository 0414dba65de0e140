//===- Conv.cpp - 2-D convolution by im2col and Eigen GEMM ----------------===//

#include "ConvGeometry.h"
#include <Eigen/Core>
#include <vector>

using namespace weft::exec;

namespace {

using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;

} // namespace

ConvGeometry::ConvGeometry(llvm::ArrayRef<int64_t> in,
                           llvm::ArrayRef<int64_t> wt,
                           const Conv2dParams &params)
    : ConvGeometry(in, wt, params,
                   (in[2] + params.pads[0] + params.pads[2] -
                    params.dilations[0] * (wt[2] - 1) - 1) /
                           params.strides[0] +
                       1,
                   (in[3] + params.pads[1] + params.pads[3] -
                    params.dilations[1] * (wt[3] - 1) - 1) /
                           params.strides[1] +
                       1) {}

ConvGeometry::ConvGeometry(llvm::ArrayRef<int64_t> in,
                           llvm::ArrayRef<int64_t> wt,
                           const Conv2dParams &params, int64_t outH,
                           int64_t outW)
    : n(in[0]), c(in[1]), h(in[2]), w(in[3]), o(wt[0]), kh(wt[2]), kw(wt[3]),
      oh(outH), ow(outW), groups(params.group), p(params) {
  cg = c / groups;
  og = o / groups;
}

void weft::exec::convolve(const ConvGeometry &g, const float *input,
                          const float *weight, float *result) {
  std::vector<float> col(g.colRows() * g.colCols());
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float *img = input + (ni * g.c + gi * g.cg) * g.h * g.w;
      g.forEachCol(
          [&](int64_t i, int64_t src) { col[i] = src < 0 ? 0.0f : img[src]; });
      Map(result + (ni * g.o + gi * g.og) * g.colCols(), g.og, g.colCols())
          .noalias() =
          ConstMap(weight + gi * g.og * g.colRows(), g.og, g.colRows()) *
          ConstMap(col.data(), g.colRows(), g.colCols());
    }
}

void weft::exec::convolveAdjoint(const ConvGeometry &g, const float *weight,
                                 const float *dResult, float *dInput) {
  std::vector<float> dcol(g.colRows() * g.colCols());
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      ConstMap dy(dResult + (ni * g.o + gi * g.og) * g.colCols(), g.og,
                  g.colCols());
      ConstMap wg(weight + gi * g.og * g.colRows(), g.og, g.colRows());
      Map(dcol.data(), g.colRows(), g.colCols()).noalias() =
          wg.transpose() * dy;
      float *dimg = dInput + (ni * g.c + gi * g.cg) * g.h * g.w;
      g.forEachCol([&](int64_t i, int64_t dst) {
        if (dst >= 0)
          dimg[dst] += dcol[i];
      });
    }
}

void weft::exec::convolveWeightGrad(const ConvGeometry &g, const float *input,
                                    const float *dResult, float *dWeight) {
  std::vector<float> col(g.colRows() * g.colCols());
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float *img = input + (ni * g.c + gi * g.cg) * g.h * g.w;
      g.forEachCol(
          [&](int64_t i, int64_t src) { col[i] = src < 0 ? 0.0f : img[src]; });
      ConstMap dy(dResult + (ni * g.o + gi * g.og) * g.colCols(), g.og,
                  g.colCols());
      Map(dWeight + gi * g.og * g.colRows(), g.og, g.colRows()).noalias() +=
          dy * ConstMap(col.data(), g.colRows(), g.colCols()).transpose();
    }
}

Tensor weft::exec::conv2d(const Tensor &input, const Tensor &weight,
                          const Tensor *bias, const Conv2dParams &params) {
  ConvGeometry g(input.getShape(), weight.getShape(), params);
  Tensor out(ElementType::F32, {g.n, g.o, g.oh, g.ow});
  convolve(g, input.floats(), weight.floats(), out.floats());
  if (bias)
    for (int64_t ni = 0; ni < g.n; ++ni)
      for (int64_t oi = 0; oi < g.o; ++oi) {
        float *row = out.floats() + (ni * g.o + oi) * g.colCols();
        for (int64_t j = 0; j < g.colCols(); ++j)
          row[j] += bias->floats()[oi];
      }
  return out;
}

Conv2dGrads weft::exec::conv2dBackward(const Tensor &input,
                                       const Tensor &weight, bool hasBias,
                                       const Tensor &dResult,
                                       const Conv2dParams &params) {
  ConvGeometry g(input.getShape(), weight.getShape(), params);
  Conv2dGrads grads{Tensor(ElementType::F32, input.getShape()),
                    Tensor(ElementType::F32, weight.getShape()), Tensor()};
  convolveWeightGrad(g, input.floats(), dResult.floats(),
                     grads.weight.floats());
  convolveAdjoint(g, weight.floats(), dResult.floats(), grads.input.floats());
  if (!hasBias)
    return grads;
  grads.bias = Tensor(ElementType::F32, {g.o});
  for (int64_t oi = 0; oi < g.o; ++oi) {
    double s = 0;
    for (int64_t ni = 0; ni < g.n; ++ni) {
      const float *row = dResult.floats() + (ni * g.o + oi) * g.colCols();
      for (int64_t j = 0; j < g.colCols(); ++j)
        s += row[j];
    }
    grads.bias.floats()[oi] = float(s);
  }
  return grads;
}
