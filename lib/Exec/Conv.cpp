//===- Conv.cpp - 2-D convolution by im2col and Eigen GEMM ----------------===//

#include "weft/Exec/Conv.h"
#include <Eigen/Core>
#include <vector>

using namespace weft::exec;

namespace {

using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;

/// Sizes of one convolution, derived once.
struct Geometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups, cg, og;
  Conv2dParams p;

  Geometry(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> wt,
           const Conv2dParams &params)
      : n(in[0]), c(in[1]), h(in[2]), w(in[3]), o(wt[0]), kh(wt[2]), kw(wt[3]),
        groups(params.group), p(params) {
    cg = c / groups;
    og = o / groups;
    oh = (h + p.pads[0] + p.pads[2] - p.dilations[0] * (kh - 1) - 1) /
             p.strides[0] +
         1;
    ow = (w + p.pads[1] + p.pads[3] - p.dilations[1] * (kw - 1) - 1) /
             p.strides[1] +
         1;
  }
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

} // namespace

Tensor weft::exec::conv2d(const Tensor &input, const Tensor &weight,
                          const Tensor *bias, const Conv2dParams &params) {
  Geometry g(input.getShape(), weight.getShape(), params);
  Tensor out(ElementType::F32, {g.n, g.o, g.oh, g.ow});
  std::vector<float> col(g.colRows() * g.colCols());
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float *img = input.floats() + (ni * g.c + gi * g.cg) * g.h * g.w;
      g.forEachCol(
          [&](int64_t i, int64_t src) { col[i] = src < 0 ? 0.0f : img[src]; });
      Map(out.floats() + (ni * g.o + gi * g.og) * g.colCols(), g.og,
          g.colCols())
          .noalias() = ConstMap(weight.floats() + gi * g.og * g.colRows(), g.og,
                                g.colRows()) *
                       ConstMap(col.data(), g.colRows(), g.colCols());
    }
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
  Geometry g(input.getShape(), weight.getShape(), params);
  Conv2dGrads grads{Tensor(ElementType::F32, input.getShape()),
                    Tensor(ElementType::F32, weight.getShape()), Tensor()};
  std::vector<float> col(g.colRows() * g.colCols()),
      dcol(g.colRows() * g.colCols());
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      int64_t imgOffset = (ni * g.c + gi * g.cg) * g.h * g.w;
      const float *img = input.floats() + imgOffset;
      g.forEachCol(
          [&](int64_t i, int64_t src) { col[i] = src < 0 ? 0.0f : img[src]; });
      ConstMap dy(dResult.floats() + (ni * g.o + gi * g.og) * g.colCols(), g.og,
                  g.colCols());
      ConstMap wg(weight.floats() + gi * g.og * g.colRows(), g.og, g.colRows());
      Map(grads.weight.floats() + gi * g.og * g.colRows(), g.og, g.colRows())
          .noalias() +=
          dy * ConstMap(col.data(), g.colRows(), g.colCols()).transpose();
      Map(dcol.data(), g.colRows(), g.colCols()).noalias() =
          wg.transpose() * dy;
      float *dimg = grads.input.floats() + imgOffset;
      g.forEachCol([&](int64_t i, int64_t dst) {
        if (dst >= 0)
          dimg[dst] += dcol[i];
      });
    }
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
