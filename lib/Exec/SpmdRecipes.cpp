//===- SpmdRecipes.cpp - Local recipes that talk across an axis -----------===//
//
// specialForward / specialBackward: the recipes of docs/ShardingRules.md
// whose devices exchange statistics or need their shard's global offset.
// This file checks that a step's shards fit its recipe, dispatches to the
// recipe's family (SpmdNormRecipes.cpp: softmax, layer_norm, batch_norm;
// SpmdLossRecipes.cpp: losses, the vocabulary-split embedding,
// reduce_mean), runs batch_norm in inference locally and slices sharded
// constants. It also defines the helpers the families share
// (SpmdRecipes.h).
//
//===----------------------------------------------------------------------===//

#include "SpmdRecipes.h"
#include "OpUtils.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;
using namespace weft::exec::recipes;
using S = LocalStep::Special;

// The helpers the families share (SpmdRecipes.h).

int64_t weft::exec::recipes::prod(llvm::ArrayRef<int64_t> s, size_t from,
                                  size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i)
    p *= s[i];
  return p;
}

Tensor weft::exec::recipes::finish(Tensor t, mlir::Operation *op, unsigned r) {
  if (std::optional<ElementType> type =
          elementTypeOf(op->getResult(r).getType()))
    t.convertTo(*type);
  return t;
}

namespace {

/// The shard shapes a special recipe indexes by (the op verifier checked
/// the clones; this guards the recipes' own loops).
llvm::Error checkShapes(LocalStep &step, const ShardGeometry &geo,
                        const DeviceTensors &in) {
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    // A recipe without operands (a sharded constant) has nothing to check.
    if (in[x].empty())
      continue;
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
