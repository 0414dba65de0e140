//===- SpmdNormRecipes.cpp - Normalisations over split dims ---------------===//
//
// The recipes of docs/ShardingRules.md that normalise over a dim split
// across devices: split softmax / log_softmax, split layer_norm and
// batch_norm with synchronised statistics. Each device computes partial
// statistics of its shard (row maxima and sums of exponentials, means and
// variances), kept in double and all-reduced over the recipe's axes, then
// normalises its own shard. softmaxStats is shared with cross_entropy over
// split classes (SpmdLossRecipes.cpp).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"
#include "SpmdRecipes.h"
#include "weft/Exec/OpKernels.h"
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

namespace weft::exec::recipes {

//===----------------------------------------------------------------------===//
// softmax / log_softmax over a split axis
//===----------------------------------------------------------------------===//

namespace {

const double kInf = std::numeric_limits<double>::infinity();

struct SoftmaxGeom {
  int64_t outer, len, inner;
};

SoftmaxGeom softmaxGeom(const Tensor &x, int64_t axis) {
  return {prod(x.getShape(), 0, axis), x.getDim(axis),
          prod(x.getShape(), axis + 1, x.getRank())};
}

} // namespace

/// Row maxima and log-sum-exps over the split axis, all-reduced.
void softmaxStats(const ShardGeometry &geo, const DeviceTensors &in,
                  int64_t axis, spmd::MeshAxes axes, Stats &maxima,
                  Stats &lse) {
  unsigned n = geo.numDevices();
  maxima.assign(n, {});
  lse.assign(n, {});
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0];
    SoftmaxGeom sg = softmaxGeom(t, axis);
    std::vector<double> m(sg.outer * sg.inner, -kInf);
    for (int64_t o = 0; o < sg.outer; ++o)
      for (int64_t l = 0; l < sg.len; ++l)
        for (int64_t i = 0; i < sg.inner; ++i)
          m[o * sg.inner + i] =
              std::max(m[o * sg.inner + i],
                       double(t.floats()[(o * sg.len + l) * sg.inner + i]));
    maxima[x] = std::move(m);
  }
  allReduceStats(geo, maxima, axes, /*max=*/true);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0];
    SoftmaxGeom sg = softmaxGeom(t, axis);
    std::vector<double> s(sg.outer * sg.inner, 0.0);
    for (int64_t o = 0; o < sg.outer; ++o)
      for (int64_t l = 0; l < sg.len; ++l)
        for (int64_t i = 0; i < sg.inner; ++i)
          s[o * sg.inner + i] +=
              std::exp(double(t.floats()[(o * sg.len + l) * sg.inner + i]) -
                       maxima[x][o * sg.inner + i]);
    lse[x] = std::move(s);
  }
  allReduceStats(geo, lse, axes, /*max=*/false);
  for (unsigned x = 0; x < n; ++x)
    for (size_t k = 0; k < lse[x].size(); ++k)
      lse[x][k] = maxima[x][k] + std::log(lse[x][k]);
}

void splitSoftmaxForward(LocalStep &step, const ShardGeometry &geo,
                         const DeviceTensors &in,
                         std::vector<llvm::SmallVector<Tensor, 2>> &out,
                         bool log) {
  int64_t axis = step.inner->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
  axis = axisOf(axis, in[0][0]->getRank());
  Stats maxima, lse;
  softmaxStats(geo, in, axis, step.reducedAxes, maxima, lse);
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0];
    SoftmaxGeom sg = softmaxGeom(t, axis);
    Tensor y = Tensor::zeros(t.getShape());
    for (int64_t o = 0; o < sg.outer; ++o)
      for (int64_t l = 0; l < sg.len; ++l)
        for (int64_t i = 0; i < sg.inner; ++i) {
          int64_t e = (o * sg.len + l) * sg.inner + i;
          double v = double(t.floats()[e]) - lse[x][o * sg.inner + i];
          y.floats()[e] = float(log ? v : std::exp(v));
        }
    out[x].push_back(finish(std::move(y), step.inner, 0));
  }
}

void splitSoftmaxBackward(LocalStep &step, const ShardGeometry &geo,
                          const DeviceTensors &in, const DeviceTensors &res,
                          const DeviceTensors &dres,
                          std::vector<llvm::SmallVector<Tensor, 4>> &din,
                          bool log) {
  int64_t axis = step.inner->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
  axis = axisOf(axis, in[0][0]->getRank());
  unsigned n = geo.numDevices();
  Stats dots(n);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &y = *res[x][0], &dy = *dres[x][0];
    SoftmaxGeom sg = softmaxGeom(y, axis);
    std::vector<double> s(sg.outer * sg.inner, 0.0);
    for (int64_t o = 0; o < sg.outer; ++o)
      for (int64_t l = 0; l < sg.len; ++l)
        for (int64_t i = 0; i < sg.inner; ++i) {
          int64_t e = (o * sg.len + l) * sg.inner + i;
          s[o * sg.inner + i] +=
              log ? double(dy.floats()[e])
                  : double(dy.floats()[e]) * double(y.floats()[e]);
        }
    dots[x] = std::move(s);
  }
  allReduceStats(geo, dots, step.reducedAxes, false);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &y = *res[x][0], &dy = *dres[x][0];
    SoftmaxGeom sg = softmaxGeom(y, axis);
    Tensor dx = Tensor::zeros(y.getShape());
    for (int64_t o = 0; o < sg.outer; ++o)
      for (int64_t l = 0; l < sg.len; ++l)
        for (int64_t i = 0; i < sg.inner; ++i) {
          int64_t e = (o * sg.len + l) * sg.inner + i;
          double t = dots[x][o * sg.inner + i];
          double yv = y.floats()[e], g = dy.floats()[e];
          dx.floats()[e] = float(log ? g - std::exp(yv) * t : yv * (g - t));
        }
    din[x].resize(1);
    din[x][0] = std::move(dx);
  }
}

//===----------------------------------------------------------------------===//
// layer_norm over split normalised dims
//===----------------------------------------------------------------------===//

namespace {

struct NormStats {
  Stats mean, rstd;
};

NormStats layerNormStats(LocalStep &step, const ShardGeometry &geo,
                         const DeviceTensors &in, int64_t axis, double eps) {
  unsigned n = geo.numDevices();
  Shape global = shapeOf(step.inner->getOperand(0));
  double count = double(prod(global, axis, global.size()));
  NormStats st;
  st.mean.assign(n, {});
  st.rstd.assign(n, {});
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0];
    int64_t rows = prod(t.getShape(), 0, axis),
            cols = prod(t.getShape(), axis, t.getRank());
    std::vector<double> s(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        s[r] += t.floats()[r * cols + c];
    st.mean[x] = std::move(s);
  }
  allReduceStats(geo, st.mean, step.reducedAxes, false);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0];
    int64_t rows = prod(t.getShape(), 0, axis),
            cols = prod(t.getShape(), axis, t.getRank());
    for (double &m : st.mean[x])
      m /= count;
    std::vector<double> s(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double d = t.floats()[r * cols + c] - st.mean[x][r];
        s[r] += d * d;
      }
    st.rstd[x] = std::move(s);
  }
  allReduceStats(geo, st.rstd, step.reducedAxes, false);
  for (unsigned x = 0; x < n; ++x)
    for (double &v : st.rstd[x])
      v = 1.0 / std::sqrt(v / count + eps);
  return st;
}

} // namespace

void splitLayerNormForward(LocalStep &step, const ShardGeometry &geo,
                           const DeviceTensors &in,
                           std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  auto op = llvm::cast<g::LayerNormOp>(step.inner);
  int64_t axis = axisOf(op.getAxis(), in[0][0]->getRank());
  double eps = op.getEpsilon().convertToDouble();
  NormStats st = layerNormStats(step, geo, in, axis, eps);
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0], &scale = *in[x][1], &bias = *in[x][2];
    int64_t rows = prod(t.getShape(), 0, axis),
            cols = prod(t.getShape(), axis, t.getRank());
    Tensor y = Tensor::zeros(t.getShape());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double xhat =
            (t.floats()[r * cols + c] - st.mean[x][r]) * st.rstd[x][r];
        y.floats()[r * cols + c] =
            float(xhat * scale.floats()[c] + bias.floats()[c]);
      }
    out[x].push_back(finish(std::move(y), step.inner, 0));
  }
}

void splitLayerNormBackward(LocalStep &step, const ShardGeometry &geo,
                            const DeviceTensors &in, const DeviceTensors &dres,
                            std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  auto op = llvm::cast<g::LayerNormOp>(step.inner);
  int64_t axis = axisOf(op.getAxis(), in[0][0]->getRank());
  double eps = op.getEpsilon().convertToDouble();
  NormStats st = layerNormStats(step, geo, in, axis, eps);
  Shape global = shapeOf(step.inner->getOperand(0));
  double count = double(prod(global, axis, global.size()));
  unsigned n = geo.numDevices();
  Stats sums(n);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0], &scale = *in[x][1], &dy = *dres[x][0];
    int64_t rows = prod(t.getShape(), 0, axis),
            cols = prod(t.getShape(), axis, t.getRank());
    std::vector<double> s(2 * rows, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double xhat =
            (t.floats()[r * cols + c] - st.mean[x][r]) * st.rstd[x][r];
        double dxhat = double(dy.floats()[r * cols + c]) * scale.floats()[c];
        s[2 * r] += dxhat;
        s[2 * r + 1] += dxhat * xhat;
      }
    sums[x] = std::move(s);
  }
  allReduceStats(geo, sums, step.reducedAxes, false);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0], &scale = *in[x][1], &dy = *dres[x][0];
    int64_t rows = prod(t.getShape(), 0, axis),
            cols = prod(t.getShape(), axis, t.getRank());
    Tensor dx = Tensor::zeros(t.getShape());
    std::vector<double> ds(cols, 0.0), db(cols, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double xhat =
            (t.floats()[r * cols + c] - st.mean[x][r]) * st.rstd[x][r];
        double g = dy.floats()[r * cols + c];
        double dxhat = g * scale.floats()[c];
        dx.floats()[r * cols + c] =
            float(st.rstd[x][r] * (dxhat - sums[x][2 * r] / count -
                                   xhat * sums[x][2 * r + 1] / count));
        ds[c] += g * xhat;
        db[c] += g;
      }
    Tensor dscale = Tensor::zeros(in[x][1]->getShape()),
           dbias = Tensor::zeros(in[x][2]->getShape());
    for (int64_t c = 0; c < cols; ++c) {
      dscale.floats()[c] = float(ds[c]);
      dbias.floats()[c] = float(db[c]);
    }
    din[x].resize(3);
    din[x][0] = std::move(dx);
    din[x][1] = std::move(dscale);
    din[x][2] = std::move(dbias);
  }
}

//===----------------------------------------------------------------------===//
// batch_norm with statistics synchronised over a split batch
//===----------------------------------------------------------------------===//

namespace {

NormStats batchNormStats(LocalStep &step, const ShardGeometry &geo,
                         const DeviceTensors &in, double eps) {
  unsigned n = geo.numDevices();
  Shape global = shapeOf(step.inner->getOperand(0));
  double count = double(numElementsOf(global) / global[1]);
  NormStats st;
  st.mean.assign(n, {});
  st.rstd.assign(n, {});
  for (int pass = 0; pass < 2; ++pass) {
    Stats &acc = pass == 0 ? st.mean : st.rstd;
    for (unsigned x = 0; x < n; ++x) {
      const Tensor &t = *in[x][0];
      int64_t N = t.getDim(0), C = t.getDim(1),
              P = prod(t.getShape(), 2, t.getRank());
      std::vector<double> s(C, 0.0);
      for (int64_t b = 0; b < N; ++b)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t p = 0; p < P; ++p) {
            double v = t.floats()[(b * C + c) * P + p];
            if (pass == 0)
              s[c] += v;
            else
              s[c] += (v - st.mean[x][c]) * (v - st.mean[x][c]);
          }
      acc[x] = std::move(s);
    }
    allReduceStats(geo, acc, step.reducedAxes, false);
    for (unsigned x = 0; x < n; ++x)
      for (double &v : acc[x])
        v = pass == 0 ? v / count : 1.0 / std::sqrt(v / count + eps);
  }
  return st;
}

} // namespace

void syncBatchNormForward(LocalStep &step, const ShardGeometry &geo,
                          const DeviceTensors &in,
                          std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  auto op = llvm::cast<g::BatchNormOp>(step.inner);
  NormStats st =
      batchNormStats(step, geo, in, op.getEpsilon().convertToDouble());
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0], &scale = *in[x][1], &bias = *in[x][2];
    int64_t N = t.getDim(0), C = t.getDim(1),
            P = prod(t.getShape(), 2, t.getRank());
    Tensor y = Tensor::zeros(t.getShape());
    for (int64_t b = 0; b < N; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < P; ++p) {
          int64_t e = (b * C + c) * P + p;
          double xhat = (t.floats()[e] - st.mean[x][c]) * st.rstd[x][c];
          y.floats()[e] = float(xhat * scale.floats()[c] + bias.floats()[c]);
        }
    out[x].push_back(finish(std::move(y), step.inner, 0));
  }
}

void syncBatchNormBackward(LocalStep &step, const ShardGeometry &geo,
                           const DeviceTensors &in, const DeviceTensors &dres,
                           std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  auto op = llvm::cast<g::BatchNormOp>(step.inner);
  NormStats st =
      batchNormStats(step, geo, in, op.getEpsilon().convertToDouble());
  Shape global = shapeOf(step.inner->getOperand(0));
  double count = double(numElementsOf(global) / global[1]);
  unsigned n = geo.numDevices();
  Stats sums(n);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0], &dy = *dres[x][0];
    int64_t N = t.getDim(0), C = t.getDim(1),
            P = prod(t.getShape(), 2, t.getRank());
    std::vector<double> s(2 * C, 0.0);
    for (int64_t b = 0; b < N; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < P; ++p) {
          int64_t e = (b * C + c) * P + p;
          double xhat = (t.floats()[e] - st.mean[x][c]) * st.rstd[x][c];
          s[2 * c] += dy.floats()[e];
          s[2 * c + 1] += dy.floats()[e] * xhat;
        }
    sums[x] = std::move(s);
  }
  Stats local = sums;
  allReduceStats(geo, sums, step.reducedAxes, false);
  for (unsigned x = 0; x < n; ++x) {
    const Tensor &t = *in[x][0], &scale = *in[x][1], &dy = *dres[x][0];
    int64_t N = t.getDim(0), C = t.getDim(1),
            P = prod(t.getShape(), 2, t.getRank());
    Tensor dx = Tensor::zeros(t.getShape());
    for (int64_t b = 0; b < N; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < P; ++p) {
          int64_t e = (b * C + c) * P + p;
          double xhat = (t.floats()[e] - st.mean[x][c]) * st.rstd[x][c];
          dx.floats()[e] = float(scale.floats()[c] * st.rstd[x][c] *
                                 (dy.floats()[e] - sums[x][2 * c] / count -
                                  xhat * sums[x][2 * c + 1] / count));
        }
    Tensor dscale = Tensor::zeros(in[x][1]->getShape()),
           dbias = Tensor::zeros(in[x][2]->getShape());
    for (int64_t c = 0; c < C; ++c) {
      dscale.floats()[c] = float(local[x][2 * c + 1]);
      dbias.floats()[c] = float(local[x][2 * c]);
    }
    din[x].resize(in[x].size());
    din[x][0] = std::move(dx);
    din[x][1] = std::move(dscale);
    din[x][2] = std::move(dbias);
  }
}

} // namespace weft::exec::recipes
