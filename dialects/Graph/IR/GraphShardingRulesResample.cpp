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
  // Weight [C, O/g, kh, kw]: input channels are its rows, output channels
  // its dim 1.
  addConvVariants(variants, *this, in, w, group, bool(getBias()),
                  {1, in[1] / group, w[1]});
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
