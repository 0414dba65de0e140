//===- SpmdLossRecipes.cpp - Recipes of global offsets and counts ---------===//
//
// The recipes of docs/ShardingRules.md that need a shard's global offset or
// the global element count: cross_entropy / nll_loss split over the batch
// (global count of the mean) or the classes (log-sum-exp over split
// classes, the target picked by the device that owns it), the
// vocabulary-split gather (embedding) and reduce_mean over a split dim
// (local sum over the global count).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"
#include "SpmdRecipes.h"
#include "weft/Exec/Kernels.h"
#include "weft/Exec/OpKernels.h"
#include <cmath>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

namespace weft::exec::recipes {

namespace {

/// Whether device `x` has coordinate 0 on every axis of `axes`.
bool firstOn(const ShardGeometry &geo, unsigned x, spmd::MeshAxes axes) {
  for (unsigned a = 0; a < geo.numAxes(); ++a)
    if ((axes & (1u << a)) && geo.coord(x, a) != 0)
      return false;
  return true;
}

/// Offset of operand `i`'s dim `dim` on device `x`, along the axes of the
/// recipe (step.reducedAxes: split classes or vocabulary).
int64_t operandOffset(const LocalStep &step, const ShardGeometry &geo,
                      unsigned i, unsigned dim, unsigned x) {
  return geo.shardOffset(shapeOf(step.inner->getOperand(i)),
                         restrictDist(step.operandDists[i], step.reducedAxes),
                         dim, x);
}

} // namespace

//===----------------------------------------------------------------------===//
// cross_entropy / nll_loss split over the batch and/or the classes
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

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

namespace {

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

} // namespace

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

namespace {

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

} // namespace

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

} // namespace weft::exec::recipes
