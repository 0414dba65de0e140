//===- OpForward.cpp - Dispatch of graph ops to forward kernels -----------===//

#include "OpScatterResample.h"
#include "OpUtils.h"
#include "weft/Exec/Kernels.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

namespace {

/// The forward of one op; `in` holds its operands.
class Forward {
public:
  Forward(llvm::ArrayRef<const Tensor *> in, const OpContext &ctx,
          llvm::SmallVectorImpl<Tensor> &out)
      : in(in), ctx(ctx), out(out) {}

  llvm::Error run(mlir::Operation *op);

private:
  const Tensor &arg(unsigned i) const { return *in[i]; }
  llvm::Error result(Tensor t) {
    out.push_back(std::move(t));
    return llvm::Error::success();
  }
  llvm::Error binaryOp(BinaryKind kind) {
    return result(binary(kind, arg(0), arg(1)));
  }
  llvm::Error unaryOp(UnaryKind kind) { return result(unary(kind, arg(0))); }
  template <typename ReduceOp>
  llvm::Error reduceOp(ReduceOp op, ReduceKind kind) {
    return result(reduce(kind, arg(0), op.getAxes(), op.getKeepdims()));
  }
  template <typename LossOp> llvm::Error lossOp(LossOp op, bool fromLogits);

  llvm::ArrayRef<const Tensor *> in;
  const OpContext &ctx;
  llvm::SmallVectorImpl<Tensor> &out;
};

template <typename LossOp>
llvm::Error Forward::lossOp(LossOp op, bool fromLogits) {
  auto params = lossParams(op);
  if (!params)
    return params.takeError();
  if (auto err = checkIndexRange(op, arg(1), arg(0).getDim(1),
                                 /*allowNegative=*/false, params->ignoreIndex,
                                 "label"))
    return err;
  return result(fromLogits ? crossEntropy(arg(0), arg(1), *params)
                           : nllLoss(arg(0), arg(1), *params));
}

llvm::Error Forward::run(mlir::Operation *op) {
  using llvm::Error;
  if (std::optional<UnaryKind> kind = unaryKindOf(op))
    return unaryOp(*kind);
  return llvm::TypeSwitch<mlir::Operation *, Error>(op)
      .Case([&](g::ConstantOp c) -> Error {
        auto t = tensorFromAttr(c.getValue());
        if (!t)
          return t.takeError();
        return result(std::move(*t));
      })
      .Case([&](g::MatMulOp) { return result(matmul(arg(0), arg(1))); })
      .Case([&](g::Conv2dOp c) {
        return result(conv2d(arg(0), arg(1), in.size() > 2 ? in[2] : nullptr,
                             convParams(c)));
      })
      .Case([&](g::AddOp) { return binaryOp(BinaryKind::Add); })
      .Case([&](g::SubOp) { return binaryOp(BinaryKind::Sub); })
      .Case([&](g::MulOp) { return binaryOp(BinaryKind::Mul); })
      .Case([&](g::DivOp) { return binaryOp(BinaryKind::Div); })
      .Case([&](g::PowOp) { return binaryOp(BinaryKind::Pow); })
      .Case([&](g::MinOp) { return binaryOp(BinaryKind::Min); })
      .Case([&](g::MaxOp) { return binaryOp(BinaryKind::Max); })
      .Case([&](g::CompareOp c) -> Error {
        std::optional<ComparePredicate> p =
            parseComparePredicate(c.getPredicate());
        if (!p)
          return badInput("{0}: unknown predicate '{1}'", describeOp(op),
                          c.getPredicate());
        return result(compare(*p, arg(0), arg(1)));
      })
      .Case([&](g::SelectOp) { return result(select(arg(0), arg(1), arg(2))); })
      .Case([&](g::CastOp c) {
        return result(cast(arg(0), *elementTypeOf(c.getType())));
      })
      .Case([&](g::ExpandOp c) {
        return result(broadcastTo(arg(0), shapeOf(c.getResult())));
      })
      .Case([&](g::ClipOp c) {
        auto bound = [](std::optional<llvm::APFloat> v) {
          return v ? std::optional<double>(v->convertToDouble()) : std::nullopt;
        };
        return result(clip(arg(0), bound(c.getMin()), bound(c.getMax())));
      })
      .Case([&](g::SoftmaxOp c) {
        return result(softmax(arg(0), axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::LogSoftmaxOp c) {
        return result(
            logSoftmax(arg(0), axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::LayerNormOp c) {
        return result(layerNorm(arg(0), arg(1), arg(2),
                                axisOf(c.getAxis(), arg(0).getRank()),
                                c.getEpsilon().convertToDouble()));
      })
      .Case([&](g::BatchNormOp c) {
        return result(batchNorm(arg(0), arg(1), arg(2), arg(3), arg(4),
                                c.getEpsilon().convertToDouble(),
                                c.getTraining()));
      })
      .Case([&](g::ReduceSumOp c) { return reduceOp(c, ReduceKind::Sum); })
      .Case([&](g::ReduceMeanOp c) { return reduceOp(c, ReduceKind::Mean); })
      .Case([&](g::ReduceMaxOp c) { return reduceOp(c, ReduceKind::Max); })
      .Case([&](g::ReshapeOp c) {
        return result(arg(0).reshaped(shapeOf(c.getResult())));
      })
      .Case([&](g::FlattenOp c) {
        return result(arg(0).reshaped(shapeOf(c.getResult())));
      })
      .Case([&](g::TransposeOp c) {
        return result(transpose(arg(0), c.getPerm()));
      })
      .Case([&](g::ConcatOp c) {
        return result(concat(in, axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::SplitOp c) -> Error {
        int64_t axis = axisOf(c.getAxis(), arg(0).getRank());
        Shape sizes;
        for (mlir::Value r : c.getResults())
          sizes.push_back(shapeOf(r)[axis]);
        for (Tensor &t : split(arg(0), axis, sizes))
          out.push_back(std::move(t));
        return Error::success();
      })
      .Case([&](g::SliceOp c) {
        return result(
            slice(arg(0), c.getStarts(), c.getLimits(), c.getSteps()));
      })
      .Case([&](g::GatherOp c) -> Error {
        int64_t axis = axisOf(c.getAxis(), arg(0).getRank());
        if (auto err =
                checkIndexRange(op, arg(1), arg(0).getDim(axis),
                                /*allowNegative=*/true, std::nullopt, "index"))
          return err;
        return result(gather(arg(0), arg(1), axis));
      })
      .Case([&](g::GatherElementsOp c) -> Error {
        int64_t axis = c.getAxis();
        if (auto err =
                checkIndexRange(op, arg(1), arg(0).getDim(axis),
                                /*allowNegative=*/true, std::nullopt, "index"))
          return err;
        return result(gatherElements(arg(0), arg(1), axis));
      })
      .Case([&](g::MaxPoolOp c) {
        return result(maxPool(arg(0), poolParams(c)));
      })
      .Case([&](g::AvgPoolOp c) {
        return result(avgPool(arg(0), poolParams(c)));
      })
      .Case([&](g::GlobalAvgPoolOp) { return result(globalAvgPool(arg(0))); })
      .Case([&](g::DropoutOp c) {
        return result(dropout(arg(0), c.getRatio().convertToDouble(), ctx.seed,
                              ctx.dropoutId, ctx.view));
      })
      .Case([&](g::CrossEntropyOp c) { return lossOp(c, /*fromLogits=*/true); })
      .Case([&](g::NllLossOp c) { return lossOp(c, /*fromLogits=*/false); })
      .Case([&](g::Top2GatingOp c) -> Error {
        GatingResult r =
            top2Gating(arg(0), arg(1), shapeOf(c.getDispatch())[3]);
        out.push_back(std::move(r.dispatch));
        out.push_back(std::move(r.combine));
        return Error::success();
      })
      .Case<g::ConvTranspose2dOp, g::ResizeOp, g::ScatterElementsOp,
            g::ScatterNdOp>(
          [&](auto) { return scatterResampleForward(op, in, ctx, out); })
      .Default([&](mlir::Operation *) -> Error {
        return badInput("{0}: no kernel for this op", describeOp(op));
      });
}

} // namespace

std::optional<double>
weft::exec::preciseLoss(mlir::Operation *op,
                        llvm::ArrayRef<const Tensor *> operands) {
  auto value = [&](auto loss, bool fromLogits) -> std::optional<double> {
    auto params = lossParams(loss);
    if (!params) {
      llvm::consumeError(params.takeError());
      return std::nullopt;
    }
    return fromLogits ? crossEntropyValue(*operands[0], *operands[1], *params)
                      : nllLossValue(*operands[0], *operands[1], *params);
  };
  if (auto ce = llvm::dyn_cast<g::CrossEntropyOp>(op))
    return value(ce, true);
  if (auto nll = llvm::dyn_cast<g::NllLossOp>(op))
    return value(nll, false);
  return std::nullopt;
}

llvm::Error weft::exec::runOpForward(mlir::Operation *op,
                                     llvm::ArrayRef<const Tensor *> operands,
                                     const OpContext &ctx,
                                     llvm::SmallVectorImpl<Tensor> &results) {
  if (auto err = Forward(operands, ctx, results).run(op))
    return err;
  // Results take their declared element types: i1, bf16/fp16 rounding.
  for (auto [value, tensor] : llvm::zip(op->getResults(), results))
    if (std::optional<ElementType> type = elementTypeOf(value.getType()))
      tensor.convertTo(*type);
  return llvm::Error::success();
}
