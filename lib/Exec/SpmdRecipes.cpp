//===- SpmdRecipes.cpp - Local recipes that talk across an axis -----------===//
//
// The recipes of docs/ShardingRules.md whose devices exchange statistics or
// need their shard's global offset: split softmax / log_softmax, split
// layer_norm, batch_norm with synchronised statistics, losses split over
// the batch (global count) or the classes (log-sum-exp over split classes,
// target picked by its owner), the vocabulary-split embedding, reduce_mean
// over a split dim (global count) and sharded constants. Statistics are
// kept in double and all-reduced over the recipe's axes.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"
#include "weft/Exec/Kernels.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;
using Stats = std::vector<std::vector<double>>;
using S = LocalStep::Special;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

int64_t prod(llvm::ArrayRef<int64_t> s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i)
    p *= s[i];
  return p;
}

/// Whether device `x` has coordinate 0 on every axis of `axes`.
bool firstOn(const ShardGeometry &geo, unsigned x, spmd::MeshAxes axes) {
  for (unsigned a = 0; a < geo.numAxes(); ++a)
    if ((axes & (1u << a)) && geo.coord(x, a) != 0)
      return false;
  return true;
}

/// A float result with the declared element type of result `r`.
Tensor finish(Tensor t, mlir::Operation *op, unsigned r) {
  if (std::optional<ElementType> type =
          elementTypeOf(op->getResult(r).getType()))
    t.convertTo(*type);
  return t;
}

/// Offset of operand `i`'s dim `dim` on device `x`, along the axes of the
/// recipe (step.reducedAxes: split classes or vocabulary).
int64_t operandOffset(const LocalStep &step, const ShardGeometry &geo,
                      unsigned i, unsigned dim, unsigned x) {
  return geo.shardOffset(shapeOf(step.inner->getOperand(i)),
                         restrictDist(step.operandDists[i], step.reducedAxes),
                         dim, x);
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax over a split axis
//===----------------------------------------------------------------------===//

struct SoftmaxGeom {
  int64_t outer, len, inner;
};

SoftmaxGeom softmaxGeom(const Tensor &x, int64_t axis) {
  return {prod(x.getShape(), 0, axis), x.getDim(axis),
          prod(x.getShape(), axis + 1, x.getRank())};
}

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

//===----------------------------------------------------------------------===//
// cross_entropy / nll_loss split over the batch and/or the classes
//===----------------------------------------------------------------------===//

struct LossSetup {
  bool fromLogits;
  LossParams params;
  /// Per device: the log-sum-exp of every element (cross_entropy), and the
  /// count dividing a mean.
  Stats lse;
  std::vector<double> count;
};

/// `reuse`: the backward may take the forward's log-sum-exps (same logits).
llvm::Expected<LossSetup> lossSetup(LocalStep &step, const ShardGeometry &geo,
                                    const DeviceTensors &in, bool reuse) {
  LossSetup ls;
  ls.fromLogits = llvm::isa<g::CrossEntropyOp>(step.inner);
  auto params = ls.fromLogits
                    ? lossParams(llvm::cast<g::CrossEntropyOp>(step.inner))
                    : lossParams(llvm::cast<g::NllLossOp>(step.inner));
  if (!params)
    return params.takeError();
  ls.params = *params;
  unsigned n = geo.numDevices();
  if (ls.fromLogits) {
    // The backward reuses the forward's log-sum-exps when the logits are
    // the same tensors.
    if (reuse && step.lseCache.size() == n && step.lseInputs.size() == n &&
        llvm::all_of(llvm::seq<unsigned>(0, n), [&](unsigned x) {
          return step.lseInputs[x] == in[x][0]->floats();
        })) {
      ls.lse = step.lseCache;
    } else {
      Stats maxima;
      softmaxStats(geo, in, 1, step.reducedAxes, maxima, ls.lse);
      step.lseCache = ls.lse;
      step.lseInputs.clear();
      for (unsigned x = 0; x < n; ++x)
        step.lseInputs.push_back(in[x][0]->floats());
    }
  }
  Shape labelsGlobal = shapeOf(step.inner->getOperand(1));
  ls.count.assign(n, double(numElementsOf(labelsGlobal)));
  if (ls.params.ignoreIndex) {
    Stats counts(n);
    for (unsigned x = 0; x < n; ++x) {
      double c = 0;
      for (int64_t v : in[x][1]->intValues())
        c += v != *ls.params.ignoreIndex;
      counts[x] = {c};
    }
    allReduceStats(geo, counts, step.batchAxes, false);
    for (unsigned x = 0; x < n; ++x)
      ls.count[x] = counts[x][0];
  }
  return ls;
}

llvm::Error lossForward(LocalStep &step, const ShardGeometry &geo,
                        const DeviceTensors &in,
                        std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  auto ls = lossSetup(step, geo, in, /*reuse=*/false);
  if (!ls)
    return ls.takeError();
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0], &labels = *in[x][1];
    int64_t N = t.getDim(0), C = t.getDim(1),
            P = prod(t.getShape(), 2, t.getRank());
    int64_t off = operandOffset(step, geo, 0, 1, x);
    bool first = firstOn(geo, x, step.reducedAxes);
    double total = 0;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t p = 0; p < P; ++p) {
        int64_t label = labels.ints()[b * P + p];
        if (ls->params.ignoreIndex && label == *ls->params.ignoreIndex)
          continue;
        if (ls->fromLogits && first)
          total += ls->lse[x][b * P + p];
        int64_t c = label - off;
        if (c >= 0 && c < C)
          total -= t.floats()[(b * C + c) * P + p];
      }
    if (ls->params.reduction == LossReduction::Mean)
      total /= ls->count[x];
    out[x].push_back(finish(Tensor::scalar(float(total)), step.inner, 0));
  }
  return llvm::Error::success();
}

llvm::Error lossBackward(LocalStep &step, const ShardGeometry &geo,
                         const DeviceTensors &in, const DeviceTensors &dres,
                         std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  auto ls = lossSetup(step, geo, in, /*reuse=*/true);
  if (!ls)
    return ls.takeError();
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0], &labels = *in[x][1];
    int64_t N = t.getDim(0), C = t.getDim(1),
            P = prod(t.getShape(), 2, t.getRank());
    int64_t off = operandOffset(step, geo, 0, 1, x);
    double scale = dres[x][0]->floats()[0];
    if (ls->params.reduction == LossReduction::Mean)
      scale /= ls->count[x];
    Tensor dx = Tensor::zeros(t.getShape());
    for (int64_t b = 0; b < N; ++b)
      for (int64_t p = 0; p < P; ++p) {
        int64_t label = labels.ints()[b * P + p];
        if (ls->params.ignoreIndex && label == *ls->params.ignoreIndex)
          continue;
        if (ls->fromLogits)
          for (int64_t c = 0; c < C; ++c) {
            int64_t e = (b * C + c) * P + p;
            dx.floats()[e] = float(scale * std::exp(double(t.floats()[e]) -
                                                    ls->lse[x][b * P + p]));
          }
        int64_t c = label - off;
        if (c >= 0 && c < C)
          dx.floats()[(b * C + c) * P + p] -= float(scale);
      }
    din[x].resize(2);
    din[x][0] = std::move(dx);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// gather over a split vocabulary
//===----------------------------------------------------------------------===//

struct GatherGeom {
  int64_t axis, outer, vocab, inner, globalVocab;
};

GatherGeom gatherGeom(LocalStep &step, const Tensor &data) {
  auto op = llvm::cast<g::GatherOp>(step.inner);
  GatherGeom gg;
  gg.axis = axisOf(op.getAxis(), data.getRank());
  gg.outer = prod(data.getShape(), 0, gg.axis);
  gg.vocab = data.getDim(gg.axis);
  gg.inner = prod(data.getShape(), gg.axis + 1, data.getRank());
  gg.globalVocab = shapeOf(op.getOperand(0))[gg.axis];
  return gg;
}

void gatherVocabForward(LocalStep &step, const ShardGeometry &geo,
                        const DeviceTensors &in,
                        std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &data = *in[x][0], &idx = *in[x][1];
    GatherGeom gg = gatherGeom(step, data);
    int64_t off = operandOffset(step, geo, 0, gg.axis, x);
    Shape shape(data.getShape().begin(), data.getShape().begin() + gg.axis);
    shape.append(idx.getShape().begin(), idx.getShape().end());
    shape.append(data.getShape().begin() + gg.axis + 1, data.getShape().end());
    Tensor y(data.getElementType(), shape);
    int64_t k = idx.getNumElements();
    for (int64_t o = 0; o < gg.outer; ++o)
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = idx.ints()[j];
        if (v < 0)
          v += gg.globalVocab;
        v -= off;
        if (v < 0 || v >= gg.vocab)
          continue;
        std::copy_n(data.floats() + (o * gg.vocab + v) * gg.inner, gg.inner,
                    y.floats() + (o * k + j) * gg.inner);
      }
    out[x].push_back(finish(std::move(y), step.inner, 0));
  }
}

void gatherVocabBackward(LocalStep &step, const ShardGeometry &geo,
                         const DeviceTensors &in, const DeviceTensors &dres,
                         std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &data = *in[x][0], &idx = *in[x][1], &dy = *dres[x][0];
    GatherGeom gg = gatherGeom(step, data);
    int64_t off = operandOffset(step, geo, 0, gg.axis, x);
    Tensor dd = Tensor::zeros(data.getShape());
    int64_t k = idx.getNumElements();
    for (int64_t o = 0; o < gg.outer; ++o)
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = idx.ints()[j];
        if (v < 0)
          v += gg.globalVocab;
        v -= off;
        if (v < 0 || v >= gg.vocab)
          continue;
        float *dst = dd.floats() + (o * gg.vocab + v) * gg.inner;
        const float *src = dy.floats() + (o * k + j) * gg.inner;
        for (int64_t i = 0; i < gg.inner; ++i)
          dst[i] += src[i];
      }
    din[x].resize(2);
    din[x][0] = std::move(dd);
  }
}

//===----------------------------------------------------------------------===//
// reduce_mean over a split dim: local sum / global count
//===----------------------------------------------------------------------===//

struct MeanGeom {
  llvm::SmallVector<int64_t, 4> axes;
  double count;
};

MeanGeom meanGeom(LocalStep &step) {
  auto op = llvm::cast<g::ReduceMeanOp>(step.inner);
  Shape global = shapeOf(op.getOperand());
  MeanGeom mg;
  mg.count = 1;
  for (int64_t a : op.getAxes()) {
    a = axisOf(a, global.size());
    mg.axes.push_back(a);
    mg.count *= double(global[a]);
  }
  llvm::sort(mg.axes);
  return mg;
}

void scaleBy(Tensor &t, double s) {
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    t.floats()[i] = float(t.floats()[i] * s);
}

void reduceMeanForward(LocalStep &step, const ShardGeometry &geo,
                       const DeviceTensors &in,
                       std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  MeanGeom mg = meanGeom(step);
  bool keep = llvm::cast<g::ReduceMeanOp>(step.inner).getKeepdims();
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    Tensor y = reduce(ReduceKind::Sum, *in[x][0], mg.axes, keep);
    scaleBy(y, 1.0 / mg.count);
    out[x].push_back(finish(std::move(y), step.inner, 0));
  }
}

void reduceMeanBackward(LocalStep &step, const ShardGeometry &geo,
                        const DeviceTensors &in, const DeviceTensors &res,
                        const DeviceTensors &dres,
                        std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  MeanGeom mg = meanGeom(step);
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    Tensor dx = reduceBackward(ReduceKind::Sum, *in[x][0], *res[x][0],
                               *dres[x][0], mg.axes);
    scaleBy(dx, 1.0 / mg.count);
    din[x].resize(1);
    din[x][0] = std::move(dx);
  }
}

/// The shard shapes a special recipe indexes by (the op verifier checked
/// the clones; this guards the recipes' own loops).
llvm::Error checkShapes(LocalStep &step, const ShardGeometry &geo,
                        const DeviceTensors &in) {
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    const Tensor &t = *in[x][0];
    bool ok = true;
    switch (step.special) {
    case S::LayerNorm: {
      int64_t axis =
          axisOf(llvm::cast<g::LayerNormOp>(step.inner).getAxis(), t.getRank());
      int64_t cols = prod(t.getShape(), axis, t.getRank());
      ok = in[x].size() == 3 && in[x][1]->getNumElements() == cols &&
           in[x][2]->getNumElements() == cols;
      break;
    }
    case S::BatchNorm:
      ok = t.getRank() >= 2 && in[x].size() == 5 &&
           in[x][1]->getNumElements() == t.getDim(1) &&
           in[x][2]->getNumElements() == t.getDim(1);
      break;
    case S::Loss:
      ok = t.getRank() >= 2 && in[x].size() == 2 && !in[x][1]->isFloat() &&
           in[x][1]->getNumElements() * t.getDim(1) == t.getNumElements();
      break;
    case S::GatherVocab:
      ok = t.isFloat() && in[x].size() == 2 && !in[x][1]->isFloat();
      break;
    default:
      break;
    }
    if (!ok)
      return makeError(ExitVerifyFailed,
                       "{0}: the shards device {1} holds do not fit the "
                       "recipe",
                       describeOp(step.inner), x);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error
weft::exec::specialForward(LocalStep &step, const ShardGeometry &geo,
                           const DeviceTensors &in,
                           std::vector<llvm::SmallVector<Tensor, 2>> &out) {
  if (auto err = checkShapes(step, geo, in))
    return err;
  switch (step.special) {
  case S::None:
    break;
  case S::Softmax:
  case S::LogSoftmax:
    splitSoftmaxForward(step, geo, in, out, step.special == S::LogSoftmax);
    break;
  case S::LayerNorm:
    splitLayerNormForward(step, geo, in, out);
    break;
  case S::BatchNorm:
    if (!llvm::cast<g::BatchNormOp>(step.inner).getTraining()) {
      // Inference: an affine map of running statistics, local.
      for (unsigned x = 0; x < geo.numDevices(); ++x)
        if (auto err = runOpForward(step.clones[x], in[x], OpContext(), out[x]))
          return err;
      break;
    }
    syncBatchNormForward(step, geo, in, out);
    break;
  case S::Loss:
    return lossForward(step, geo, in, out);
  case S::GatherVocab:
    gatherVocabForward(step, geo, in, out);
    break;
  case S::ReduceMean:
    reduceMeanForward(step, geo, in, out);
    break;
  case S::Constant: {
    auto c = llvm::cast<g::ConstantOp>(step.inner);
    auto whole = tensorFromAttr(c.getValue());
    if (!whole)
      return whole.takeError();
    whole->convertTo(*elementTypeOf(c.getType()));
    Shape shape = shapeOf(c.getResult());
    for (unsigned x = 0; x < geo.numDevices(); ++x)
      out[x].push_back(
          extractBox(*whole, geo.shardBox(shape, step.resultDists[0], x)));
    break;
  }
  }
  return llvm::Error::success();
}

llvm::Error
weft::exec::specialBackward(LocalStep &step, const ShardGeometry &geo,
                            const DeviceTensors &in, const DeviceTensors &res,
                            const DeviceTensors &dres,
                            std::vector<llvm::SmallVector<Tensor, 4>> &din) {
  if (auto err = checkShapes(step, geo, in))
    return err;
  switch (step.special) {
  case S::None:
  case S::Constant:
    break;
  case S::Softmax:
  case S::LogSoftmax:
    splitSoftmaxBackward(step, geo, in, res, dres, din,
                         step.special == S::LogSoftmax);
    break;
  case S::LayerNorm:
    splitLayerNormBackward(step, geo, in, dres, din);
    break;
  case S::BatchNorm:
    if (!llvm::cast<g::BatchNormOp>(step.inner).getTraining()) {
      for (unsigned x = 0; x < geo.numDevices(); ++x) {
        llvm::SmallVector<Tensor> grads;
        if (auto err = runOpBackward(step.clones[x], in[x], res[x], dres[x],
                                     OpContext(), grads))
          return err;
        din[x].assign(std::make_move_iterator(grads.begin()),
                      std::make_move_iterator(grads.end()));
      }
      break;
    }
    syncBatchNormBackward(step, geo, in, dres, din);
    break;
  case S::Loss:
    return lossBackward(step, geo, in, dres, din);
  case S::GatherVocab:
    gatherVocabBackward(step, geo, in, dres, din);
    break;
  case S::ReduceMean:
    reduceMeanBackward(step, geo, in, res, dres, din);
    break;
  }
  return llvm::Error::success();
}
