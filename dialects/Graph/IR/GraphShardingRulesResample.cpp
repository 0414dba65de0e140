//===- GraphShardingRulesResample.cpp - Rules of conv_transpose2d, resize -===//
//
// ShardingRuleOpInterface for the transposed convolution (the rules of
// conv2d with the weight's channel dims swapped: C × O/group × KH × KW) and
// for resize (docs/ShardingRules.md). A spatial split (halo exchange) has
// no variant, as for conv2d.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace weft::graph;
using namespace weft::graph::rules;

void ConvTranspose2dOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  int64_t group = getGroup();
  bool hasBias = bool(getBias());
  auto withBias = [&](SmallVector<AxisLayout> operands, AxisLayout bias) {
    if (hasBias)
      operands.push_back(bias);
    return operands;
  };
  const AxisLayout id = AxisLayout::identity();
  addReplicated(variants, *this);
  if (splittable(in[0]))
    addVariant(variants, *this, "split-batch",
               withBias({AxisLayout::gather(0), id}, id),
               {AxisLayout::gather(0)});
  if (group == 1) {
    // Output channels are the weight's dim 1.
    if (splittable(w[1]))
      addVariant(variants, *this, "split-out-channels",
                 withBias({id, AxisLayout::gather(1)}, AxisLayout::gather(0)),
                 {AxisLayout::gather(1)});
    // Every input channel adds into every output: partial sums.
    if (splittable(in[1])) {
      ShardingVariant &v = addVariant(
          variants, *this, "split-in-channels",
          withBias({AxisLayout::gather(1), AxisLayout::gather(0)}, id),
          {AxisLayout::reduce()});
      if (hasBias)
        v.onceOperands.push_back(2);
    }
  } else if (splittable(group)) {
    // Whole groups: input channels (and weight rows) in multiples of C/g,
    // output channels (bias, result) in multiples of O/g.
    int64_t inPerGroup = in[1] / group, outPerGroup = w[1];
    addVariant(variants, *this, "split-groups",
               withBias({AxisLayout::gather(1, inPerGroup),
                         AxisLayout::gather(0, inPerGroup)},
                        AxisLayout::gather(0, outPerGroup)),
               {AxisLayout::gather(1, outPerGroup)});
  }
  // Linear in the input and in the weight; the bias is added once.
  SmallVector<unsigned> once;
  if (hasBias)
    once.push_back(2);
  addPartial(variants, *this, {0}, Combiner::Sum, once, "partial-input");
  addPartial(variants, *this, {1}, Combiner::Sum, once, "partial-weight");
}

void ResizeOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  ArrayRef<double> scales = getScales();
  addReplicated(variants, *this);
  // Dims the op copies (scale 1, extent unchanged) split like an
  // elementwise op's; a resampled dim reads its neighbours' elements.
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (in[d] != out[d] || scales[d] != 1.0 || !splittable(in[d]))
      continue;
    SmallVector<AxisLayout> operands{AxisLayout::gather(d)};
    // The run-time scales are whole on every device.
    if (getRuntimeScales())
      operands.push_back(AxisLayout::identity());
    addVariant(variants, *this, "split", operands, {AxisLayout::gather(d)});
  }
  // A fixed linear map of the input; nearest only copies elements, so it
  // also commutes with max.
  addPartial(variants, *this, {0}, Combiner::Sum);
  if (getMode() == "nearest")
    addPartial(variants, *this, {0}, Combiner::Max);
}
