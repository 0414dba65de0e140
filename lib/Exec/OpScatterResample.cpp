//===- OpScatterResample.cpp - conv_transpose2d, resize, scatters ---------===//

#include "OpScatterResample.h"
#include "OpUtils.h"
#include "weft/Exec/ConvTranspose.h"
#include "weft/Exec/Resize.h"
#include "weft/Exec/Scatter.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

namespace {

ConvTranspose2dParams convTransposeParams(g::ConvTranspose2dOp op) {
  ConvTranspose2dParams p;
  std::copy_n(op.getStrides().begin(), 2, p.strides.begin());
  std::copy_n(op.getPads().begin(), 4, p.pads.begin());
  std::copy_n(op.getDilations().begin(), 2, p.dilations.begin());
  p.group = int64_t(op.getGroup());
  return p;
}

/// The attributes of a resize; the scales of its run-time operand, when it
/// has one, each checked to give the result's extent.
llvm::Expected<ResizeParams> resizeParams(g::ResizeOp op,
                                          llvm::ArrayRef<const Tensor *> in) {
  ResizeParams p;
  p.mode = op.getMode().str();
  p.coordinateMode = op.getCoordinateTransformationMode().str();
  p.nearestMode = op.getNearestMode().str();
  p.scales.assign(op.getScales().begin(), op.getScales().end());
  p.cubicCoeffA = op.getCubicCoeffA().convertToDouble();
  p.excludeOutside = op.getExcludeOutside();
  p.antialias = op.getAntialias();
  if (in.size() < 2)
    return p;
  Shape result = shapeOf(op.getResult());
  const Tensor &scales = *in[1];
  if (scales.getNumElements() != int64_t(result.size()))
    return badInput("{0}: {1} run-time scales for a tensor of rank {2}",
                    describeOp(op), scales.getNumElements(), result.size());
  for (size_t d = 0; d < result.size(); ++d) {
    double s = scales.floats()[d];
    int64_t extent = in[0]->getDim(d);
    // A dim the plan splits keeps scale 1: its shard is copied whole.
    if (op.getScales()[d] == 1.0 && extent == result[d]) {
      if (s != 1.0)
        return badInput("{0}: run-time scale {1} of dim {2}, where the "
                        "shapes say 1",
                        describeOp(op), s, d);
      continue;
    }
    if (!(s > 0) || int64_t(std::floor(double(extent) * s)) != result[d])
      return badInput("{0}: run-time scale {1} of dim {2} gives extent {3}, "
                      "the result has {4}",
                      describeOp(op), s, d,
                      int64_t(std::floor(double(extent) * s)), result[d]);
    p.scales[d] = s;
  }
  return p;
}

/// The global extent of dim d of the data (the shard's own without a view).
int64_t globalExtent(const Tensor &data, const OpContext &ctx, size_t d) {
  return ctx.view.globalShape.empty() ? data.getDim(d)
                                      : ctx.view.globalShape[d];
}

/// The targets of a scatter op, its indices checked against the data's
/// global extents.
template <typename ScatterOp>
llvm::Expected<std::vector<int64_t>>
targetsOf(ScatterOp op, llvm::ArrayRef<const Tensor *> in,
          const OpContext &ctx) {
  const Tensor &data = *in[0], &idx = *in[1];
  if constexpr (std::is_same_v<ScatterOp, g::ScatterElementsOp>) {
    int64_t axis = int64_t(op.getAxis());
    if (auto err =
            checkIndexRange(op, idx, globalExtent(data, ctx, axis),
                            /*allowNegative=*/true, std::nullopt, "index"))
      return std::move(err);
    return scatterElementsTargets(data.getShape(), idx, axis, ctx.view);
  } else {
    int64_t k = idx.getShape().back();
    for (int64_t e = 0, n = idx.getNumElements(); e < n; ++e) {
      int64_t limit = globalExtent(data, ctx, e % k), v = idx.ints()[e];
      if (v < -limit || v >= limit)
        return badInput("{0}: index {1} at element {2} is out of range [{3}, "
                        "{4}) of data dim {5}",
                        describeOp(op), v, e, -limit, limit, e % k);
    }
    return scatterNdTargets(data.getShape(), idx, ctx.view);
  }
}

template <typename ScatterOp>
llvm::Expected<ScatterReduction> reductionOf(ScatterOp op) {
  std::optional<ScatterReduction> r = parseScatterReduction(op.getReduction());
  if (!r)
    return badInput("{0}: unknown reduction '{1}'", describeOp(op),
                    op.getReduction());
  return *r;
}

template <typename ScatterOp>
llvm::Error scatterForward(ScatterOp op, llvm::ArrayRef<const Tensor *> in,
                           const OpContext &ctx,
                           llvm::SmallVectorImpl<Tensor> &out) {
  auto r = reductionOf(op);
  if (!r)
    return r.takeError();
  auto targets = targetsOf(op, in, ctx);
  if (!targets)
    return targets.takeError();
  out.push_back(scatter(*in[0], *in[2], *targets, *r));
  return llvm::Error::success();
}

template <typename ScatterOp>
llvm::Error scatterBackwardOf(ScatterOp op, llvm::ArrayRef<const Tensor *> in,
                              const Tensor &dy, const OpContext &ctx,
                              llvm::SmallVectorImpl<Tensor> &grads) {
  auto r = reductionOf(op);
  if (!r)
    return r.takeError();
  auto targets = targetsOf(op, in, ctx);
  if (!targets)
    return targets.takeError();
  ScatterGrads sg = scatterBackward(*in[0], *in[2], *targets, *r, dy);
  grads[0] = std::move(sg.data);
  grads[2] = std::move(sg.updates);
  return llvm::Error::success();
}

} // namespace

llvm::Error weft::exec::scatterResampleForward(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> in,
    const OpContext &ctx, llvm::SmallVectorImpl<Tensor> &out) {
  using llvm::Error;
  auto result = [&](Tensor t) {
    out.push_back(std::move(t));
    return Error::success();
  };
  return llvm::TypeSwitch<mlir::Operation *, Error>(op)
      .Case([&](g::ConvTranspose2dOp c) {
        return result(
            convTranspose2d(*in[0], *in[1], in.size() > 2 ? in[2] : nullptr,
                            convTransposeParams(c), shapeOf(c.getResult())));
      })
      .Case([&](g::ResizeOp c) -> Error {
        auto params = resizeParams(c, in);
        if (!params)
          return params.takeError();
        return result(resize(*in[0], *params, shapeOf(c.getResult())));
      })
      .Case([&](g::ScatterElementsOp c) {
        return scatterForward(c, in, ctx, out);
      })
      .Case([&](g::ScatterNdOp c) { return scatterForward(c, in, ctx, out); })
      .Default([&](mlir::Operation *) -> Error {
        return badInput("{0}: no kernel for this op", describeOp(op));
      });
}

llvm::Error weft::exec::scatterResampleBackward(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> in,
    llvm::ArrayRef<const Tensor *> res, llvm::ArrayRef<const Tensor *> dres,
    const OpContext &ctx, llvm::SmallVectorImpl<Tensor> &grads) {
  using llvm::Error;
  const Tensor &dy = *dres[0];
  return llvm::TypeSwitch<mlir::Operation *, Error>(op)
      .Case([&](g::ConvTranspose2dOp c) {
        bool hasBias = in.size() > 2;
        Conv2dGrads cg = convTranspose2dBackward(*in[0], *in[1], hasBias, dy,
                                                 convTransposeParams(c));
        grads[0] = std::move(cg.input);
        grads[1] = std::move(cg.weight);
        if (hasBias)
          grads[2] = std::move(cg.bias);
        return Error::success();
      })
      .Case([&](g::ResizeOp c) -> Error {
        auto params = resizeParams(c, in);
        if (!params)
          return params.takeError();
        grads[0] = resizeBackward(in[0]->getShape(), dy, *params);
        return Error::success();
      })
      .Case([&](g::ScatterElementsOp c) {
        return scatterBackwardOf(c, in, dy, ctx, grads);
      })
      .Case([&](g::ScatterNdOp c) {
        return scatterBackwardOf(c, in, dy, ctx, grads);
      })
      .Default([&](mlir::Operation *) -> Error {
        return badInput("{0}: no backward kernel for this op", describeOp(op));
      });
}
