//===- GraphShardingRulesCompute.cpp - Sharding rules: compute ops --------===//
//
// ShardingRuleOpInterface for contractions, convolutions, pooling,
// normalisation, softmax, reductions, losses and gating (docs/Design.md §3.3,
// docs/ShardingRules.md). Splitting a dim an op reduces over gives a partial
// result, or a recipe with all-reduces of statistics.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace weft::graph;
using namespace weft::graph::rules;

/// `shape` with the dims in `dims` set to 1: the shape of a statistic kept
/// per reduced slice.
static SmallVector<int64_t, 4> statisticShape(ArrayRef<int64_t> shape,
                                              ArrayRef<int64_t> dims) {
  SmallVector<int64_t, 4> stat(shape.begin(), shape.end());
  for (int64_t d : dims)
    stat[d] = 1;
  return stat;
}

static int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

void MatMulOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs()),
                    res = shapeOf(getResult());
  int64_t l = lhs.size(), r = rhs.size(), n = res.size();
  addReplicated(variants, *this);
  // Batch dims broadcast like an elementwise op's.
  for (int64_t d = 0; d < n - 2; ++d) {
    if (!splittable(res[d]))
      continue;
    addVariant(variants, *this, "split-batch",
               {broadcastLayout(lhs.drop_back(2), res.drop_back(2), d),
                broadcastLayout(rhs.drop_back(2), res.drop_back(2), d)},
               {AxisLayout::gather(d)});
  }
  if (splittable(lhs[l - 2]))
    addVariant(variants, *this, "split-rows",
               {AxisLayout::gather(l - 2), AxisLayout::identity()},
               {AxisLayout::gather(n - 2)});
  if (splittable(rhs[r - 1]))
    addVariant(variants, *this, "split-cols",
               {AxisLayout::identity(), AxisLayout::gather(r - 1)},
               {AxisLayout::gather(n - 1)});
  if (splittable(lhs[l - 1]))
    addVariant(variants, *this, "split-contraction",
               {AxisLayout::gather(l - 1), AxisLayout::gather(r - 2)},
               {AxisLayout::reduce()});
  // Linear in each operand.
  addPartial(variants, *this, {0}, Combiner::Sum, {}, "partial-lhs");
  addPartial(variants, *this, {1}, Combiner::Sum, {}, "partial-rhs");
}

void Conv2dOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> w = shapeOf(getWeight());
  int64_t group = getGroup();
  // Weight [O, C/g, kh, kw]: output channels are its rows.
  addConvVariants(variants, *this, shapeOf(getInput()), w, group,
                  bool(getBias()), {0, w[0] / group, w[0] / group});
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Pooling is independent per image and per channel.
static void getPoolVariants(Operation *op, Variants &variants, bool linear) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  addReplicated(variants, op);
  if (splittable(in[0]))
    addVariant(variants, op, "split-batch", {AxisLayout::gather(0)},
               {AxisLayout::gather(0)});
  if (splittable(in[1]))
    addVariant(variants, op, "split-channels", {AxisLayout::gather(1)},
               {AxisLayout::gather(1)});
  if (linear)
    addPartial(variants, op, {0});
}

void MaxPoolOp::getShardingVariants(Variants &variants) {
  getPoolVariants(*this, variants, /*linear=*/false);
}
void AvgPoolOp::getShardingVariants(Variants &variants) {
  getPoolVariants(*this, variants, /*linear=*/true);
}
void GlobalAvgPoolOp::getShardingVariants(Variants &variants) {
  getPoolVariants(*this, variants, /*linear=*/true);
}

//===----------------------------------------------------------------------===//
// Softmax and normalisation
//===----------------------------------------------------------------------===//

/// Softmax and log-softmax: local on a kept dim; over a split reduced dim,
/// the local max is all-reduced (a stability shift), then the local sum of
/// exponentials.
static void getSoftmaxVariants(Operation *op, int64_t axis,
                               Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  axis = normalizeAxis(axis, in.size());
  addReplicated(variants, op);
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (!splittable(in[d]))
      continue;
    ShardingVariant &v =
        addVariant(variants, op, d == axis ? "split-reduced" : "split",
                   {AxisLayout::gather(d)}, {AxisLayout::gather(d)});
    if (d != axis)
      continue;
    SmallVector<int64_t, 4> stat = statisticShape(in, {axis});
    v.allReduces = {{Combiner::Max, stat}, {Combiner::Sum, stat}};
  }
}

void SoftmaxOp::getShardingVariants(Variants &variants) {
  getSoftmaxVariants(*this, getAxis(), variants);
}
void LogSoftmaxOp::getShardingVariants(Variants &variants) {
  getSoftmaxVariants(*this, getAxis(), variants);
}

void LayerNormOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t rank = in.size();
  int64_t axis = normalizeAxis(int64_t(getAxis()), rank);
  const AxisLayout id = AxisLayout::identity();
  addReplicated(variants, *this);
  SmallVector<int64_t> normalized;
  for (int64_t d = axis; d < rank; ++d)
    normalized.push_back(d);
  for (int64_t d = 0; d < rank; ++d) {
    if (!splittable(in[d]))
      continue;
    AxisLayout g = AxisLayout::gather(d);
    if (d < axis) {
      addVariant(variants, *this, "split", {g, id, id}, {g});
      continue;
    }
    // Mean, then variance about it, from all-reduced local sums.
    AxisLayout affine = AxisLayout::gather(d - axis);
    ShardingVariant &v = addVariant(variants, *this, "split-normalized",
                                    {g, affine, affine}, {g});
    SmallVector<int64_t, 4> stat = statisticShape(in, normalized);
    v.allReduces = {{Combiner::Sum, stat}, {Combiner::Sum, stat}};
  }
}

void BatchNormOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  const AxisLayout id = AxisLayout::identity();
  addReplicated(variants, *this);
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (!splittable(in[d]))
      continue;
    AxisLayout g = AxisLayout::gather(d);
    if (d == 1) {
      AxisLayout c = AxisLayout::gather(0);
      addVariant(variants, *this, "split-channels", {g, c, c, c, c}, {g});
      continue;
    }
    if (!getTraining()) {
      // Inference: an elementwise affine map with running statistics.
      addVariant(variants, *this, "split-inference", {g, id, id, id, id}, {g});
      continue;
    }
    // Training: per-channel sums and sums of squared deviations over the
    // global batch; every device then updates the same running statistics.
    ShardingVariant &v = addVariant(variants, *this, "split-batch-sync-stats",
                                    {g, id, id, id, id}, {g});
    SmallVector<int64_t, 4> stat{in[1]};
    v.allReduces = {{Combiner::Sum, stat}, {Combiner::Sum, stat}};
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// A kept dim splits locally; a reduced dim leaves a partial result (a mean
/// divides its local sum by the global extent).
static void getReduceVariants(Operation *op, ArrayRef<int64_t> axes,
                              bool keepdims, Combiner combiner,
                              Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  bool partials = allFloat(op);
  addReplicated(variants, op);
  int64_t resultDim = 0;
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (splittable(in[d])) {
      if (!reduced)
        addVariant(variants, op, "split-kept", {AxisLayout::gather(d)},
                   {AxisLayout::gather(resultDim)});
      else if (partials)
        addVariant(variants, op, "split-reduced", {AxisLayout::gather(d)},
                   {AxisLayout::reduce(combiner)});
    }
    if (!reduced || keepdims)
      ++resultDim;
  }
  addPartial(variants, op, {0}, combiner);
}

void ReduceSumOp::getShardingVariants(Variants &variants) {
  getReduceVariants(*this, getAxes(), getKeepdims(), Combiner::Sum, variants);
}
void ReduceMeanOp::getShardingVariants(Variants &variants) {
  getReduceVariants(*this, getAxes(), getKeepdims(), Combiner::Sum, variants);
}
void ReduceMaxOp::getShardingVariants(Variants &variants) {
  getReduceVariants(*this, getAxes(), getKeepdims(), Combiner::Max, variants);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Splitting the batch (or a trailing dim) of a loss leaves a partial sum:
/// each device sums its elements' losses and, for `mean`, divides by the
/// global count — static unless labels may be ignored, when the count of
/// counted labels is all-reduced first.
static void addLossBatchSplits(Operation *op, StringRef reduction,
                               bool hasIgnoreIndex, Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (d == 1 || !splittable(in[d]))
      continue;
    ShardingVariant &v = addVariant(
        variants, op, "split-batch",
        {AxisLayout::gather(d), AxisLayout::gather(d == 0 ? 0 : d - 1)},
        {AxisLayout::reduce()});
    if (reduction == "mean" && hasIgnoreIndex)
      v.allReduces = {{Combiner::Sum, {}}};
  }
}

void CrossEntropyOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput()), labels = shapeOf(getLabels());
  addReplicated(variants, *this);
  addLossBatchSplits(*this, getReduction(), getIgnoreIndex().has_value(),
                     variants);
  if (!splittable(in[1]))
    return;
  // Log-sum-exp over split classes (max, then sum of exponentials, per
  // label position); the target logit is picked by the device owning it
  // (global offset and mask) and log-sum-exp is counted on one device.
  ShardingVariant &v = addVariant(
      variants, *this, "split-classes",
      {AxisLayout::gather(1), AxisLayout::identity()}, {AxisLayout::reduce()});
  v.needsGlobalOffset = true;
  SmallVector<int64_t, 4> stat(labels.begin(), labels.end());
  v.allReduces = {{Combiner::Max, stat}, {Combiner::Sum, stat}};
}

void NllLossOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  addReplicated(variants, *this);
  addLossBatchSplits(*this, getReduction(), getIgnoreIndex().has_value(),
                     variants);
  // Linear in the log-probabilities: the owner of the target picks it.
  if (splittable(in[1]))
    addVariant(variants, *this, "split-classes",
               {AxisLayout::gather(1), AxisLayout::identity()},
               {AxisLayout::reduce()})
        .needsGlobalOffset = true;
  addPartial(variants, *this, {0});
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

void Top2GatingOp::getShardingVariants(Variants &variants) {
  addReplicated(variants, *this);
  // Capacity is counted per group, so groups are independent.
  if (splittable(shapeOf(getTokens())[0]))
    addVariant(variants, *this, "split-groups",
               {AxisLayout::gather(0), AxisLayout::identity()},
               {AxisLayout::gather(0), AxisLayout::gather(0)});
}
