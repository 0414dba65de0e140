//===- OpBackward.cpp - Dispatch of graph ops to backward kernels ---------===//

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

/// The backward of one op: `in` and `res` are its forward operands and
/// results, `dres` the results' gradients; fills one gradient per operand.
class Backward {
public:
  Backward(llvm::ArrayRef<const Tensor *> in,
           llvm::ArrayRef<const Tensor *> res,
           llvm::ArrayRef<const Tensor *> dres, const OpContext &ctx,
           llvm::SmallVectorImpl<Tensor> &grads)
      : in(in), res(res), dres(dres), ctx(ctx), grads(grads) {
    grads.assign(in.size(), Tensor());
  }

  llvm::Error run(mlir::Operation *op);

private:
  const Tensor &arg(unsigned i) const { return *in[i]; }
  const Tensor &dy(unsigned i = 0) const { return *dres[i]; }
  llvm::Error set(unsigned i, Tensor t) {
    grads[i] = std::move(t);
    return llvm::Error::success();
  }
  llvm::Error setPair(BinaryGrads g, unsigned first = 0) {
    grads[first] = std::move(g.lhs);
    grads[first + 1] = std::move(g.rhs);
    return llvm::Error::success();
  }
  llvm::Error binaryOp(BinaryKind kind) {
    return setPair(binaryBackward(kind, arg(0), arg(1), *res[0], dy()));
  }
  llvm::Error unaryOp(UnaryKind kind) {
    return set(0, unaryBackward(kind, arg(0), *res[0], dy()));
  }
  template <typename ReduceOp>
  llvm::Error reduceOp(ReduceOp op, ReduceKind kind) {
    return set(0, reduceBackward(kind, arg(0), *res[0], dy(), op.getAxes()));
  }
  template <typename LossOp> llvm::Error lossOp(LossOp op, bool fromLogits);

  llvm::ArrayRef<const Tensor *> in, res, dres;
  const OpContext &ctx;
  llvm::SmallVectorImpl<Tensor> &grads;
};

template <typename LossOp>
llvm::Error Backward::lossOp(LossOp op, bool fromLogits) {
  auto params = lossParams(op);
  if (!params)
    return params.takeError();
  float dLoss = dy().floats()[0];
  return set(0,
             fromLogits
                 ? crossEntropyBackward(arg(0), arg(1), dLoss, *params)
                 : nllLossBackward(arg(0).getShape(), arg(1), dLoss, *params));
}

llvm::Error Backward::run(mlir::Operation *op) {
  using llvm::Error;
  if (std::optional<UnaryKind> kind = unaryKindOf(op))
    return unaryOp(*kind);
  auto done = [] { return Error::success(); };
  return llvm::TypeSwitch<mlir::Operation *, Error>(op)
      .Case([&](g::ConstantOp) { return done(); })
      .Case([&](g::MatMulOp) {
        return setPair(matmulBackward(arg(0), arg(1), dy()));
      })
      .Case([&](g::Conv2dOp c) {
        bool hasBias = in.size() > 2;
        Conv2dGrads cg =
            conv2dBackward(arg(0), arg(1), hasBias, dy(), convParams(c));
        grads[0] = std::move(cg.input);
        grads[1] = std::move(cg.weight);
        if (hasBias)
          grads[2] = std::move(cg.bias);
        return done();
      })
      .Case([&](g::AddOp) { return binaryOp(BinaryKind::Add); })
      .Case([&](g::SubOp) { return binaryOp(BinaryKind::Sub); })
      .Case([&](g::MulOp) { return binaryOp(BinaryKind::Mul); })
      .Case([&](g::DivOp) { return binaryOp(BinaryKind::Div); })
      .Case([&](g::PowOp) { return binaryOp(BinaryKind::Pow); })
      .Case([&](g::MinOp) { return binaryOp(BinaryKind::Min); })
      .Case([&](g::MaxOp) { return binaryOp(BinaryKind::Max); })
      .Case([&](g::CompareOp) { return done(); })
      .Case([&](g::SelectOp) {
        return setPair(
            selectBackward(arg(0), arg(1).getShape(), arg(2).getShape(), dy()),
            1);
      })
      .Case([&](g::CastOp) {
        // Float-to-float casts pass the gradient through (as f32).
        return set(0, cast(dy(), ElementType::F32));
      })
      .Case([&](g::ExpandOp) {
        return set(0, reduceToShape(dy(), arg(0).getShape()));
      })
      .Case([&](g::ClipOp c) {
        auto bound = [](std::optional<llvm::APFloat> v) {
          return v ? std::optional<double>(v->convertToDouble()) : std::nullopt;
        };
        return set(0, clipBackward(arg(0), bound(c.getMin()), bound(c.getMax()),
                                   dy()));
      })
      .Case([&](g::SoftmaxOp c) {
        return set(0, softmaxBackward(*res[0], dy(),
                                      axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::LogSoftmaxOp c) {
        return set(0,
                   logSoftmaxBackward(*res[0], dy(),
                                      axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::LayerNormOp c) {
        NormGrads ng = layerNormBackward(arg(0), arg(1), dy(),
                                         axisOf(c.getAxis(), arg(0).getRank()),
                                         c.getEpsilon().convertToDouble());
        grads[0] = std::move(ng.input);
        grads[1] = std::move(ng.scale);
        grads[2] = std::move(ng.bias);
        return done();
      })
      .Case([&](g::BatchNormOp c) {
        NormGrads ng = batchNormBackward(arg(0), arg(1), arg(3), arg(4), dy(),
                                         c.getEpsilon().convertToDouble(),
                                         c.getTraining());
        grads[0] = std::move(ng.input);
        grads[1] = std::move(ng.scale);
        grads[2] = std::move(ng.bias);
        return done();
      })
      .Case([&](g::ReduceSumOp c) { return reduceOp(c, ReduceKind::Sum); })
      .Case([&](g::ReduceMeanOp c) { return reduceOp(c, ReduceKind::Mean); })
      .Case([&](g::ReduceMaxOp c) { return reduceOp(c, ReduceKind::Max); })
      .Case<g::ReshapeOp, g::FlattenOp>(
          [&](auto) { return set(0, dy().reshaped(arg(0).getShape())); })
      .Case([&](g::TransposeOp c) {
        return set(0, transposeBackward(dy(), c.getPerm()));
      })
      .Case([&](g::ConcatOp c) {
        int64_t axis = axisOf(c.getAxis(), arg(0).getRank());
        Shape sizes;
        for (const Tensor *t : in)
          sizes.push_back(t->getDim(axis));
        std::vector<Tensor> pieces = split(dy(), axis, sizes);
        for (size_t i = 0; i < pieces.size(); ++i)
          grads[i] = std::move(pieces[i]);
        return done();
      })
      .Case([&](g::SplitOp c) {
        return set(0, concat(dres, axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::SliceOp c) {
        return set(0, sliceBackward(arg(0).getShape(), dy(), c.getStarts(),
                                    c.getSteps()));
      })
      .Case([&](g::GatherOp c) {
        return set(0, gatherBackward(arg(0).getShape(), arg(1), dy(),
                                     axisOf(c.getAxis(), arg(0).getRank())));
      })
      .Case([&](g::GatherElementsOp c) {
        return set(0, gatherElementsBackward(arg(0).getShape(), arg(1), dy(),
                                             c.getAxis()));
      })
      .Case([&](g::MaxPoolOp c) {
        return set(0, maxPoolBackward(arg(0), dy(), poolParams(c)));
      })
      .Case([&](g::AvgPoolOp c) {
        return set(0, avgPoolBackward(arg(0).getShape(), dy(), poolParams(c)));
      })
      .Case([&](g::GlobalAvgPoolOp) {
        return set(0, globalAvgPoolBackward(arg(0).getShape(), dy()));
      })
      .Case([&](g::DropoutOp c) {
        // dy ⊙ mask: the same mask, recomputed from its key.
        return set(0, dropout(dy(), c.getRatio().convertToDouble(), ctx.seed,
                              ctx.dropoutId, ctx.view));
      })
      .Case([&](g::CrossEntropyOp c) { return lossOp(c, /*fromLogits=*/true); })
      .Case([&](g::NllLossOp c) { return lossOp(c, /*fromLogits=*/false); })
      .Case([&](g::Top2GatingOp c) {
        return setPair(top2GatingBackward(arg(0), arg(1), dy(1),
                                          shapeOf(c.getDispatch())[3]));
      })
      .Case<g::ConvTranspose2dOp, g::ResizeOp, g::ScatterElementsOp,
            g::ScatterNdOp>([&](auto) {
        return scatterResampleBackward(op, in, res, dres, ctx, grads);
      })
      .Default([&](mlir::Operation *) -> Error {
        return badInput("{0}: no backward kernel for this op", describeOp(op));
      });
}

} // namespace

llvm::Error weft::exec::runOpBackward(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
    llvm::ArrayRef<const Tensor *> results,
    llvm::ArrayRef<const Tensor *> resultGrads, const OpContext &ctx,
    llvm::SmallVectorImpl<Tensor> &operandGrads) {
  operandGrads.assign(operands.size(), Tensor());
  // Integer results (indices, masks, shapes) carry no gradient.
  if (llvm::none_of(resultGrads, [](const Tensor *t) { return t; }))
    return llvm::Error::success();
  if (auto err =
          Backward(operands, results, resultGrads, ctx, operandGrads).run(op))
    return err;
  for (auto [operand, grad] : llvm::zip(operands, operandGrads))
    if (!operand->isFloat())
      grad = Tensor();
  return llvm::Error::success();
}
