//===- GraphShardingRulesScatter.cpp - Rules of scatter_elements, scatter_nd
//-===//
//
// ShardingRuleOpInterface for the scatters (docs/ShardingRules.md). A dim
// the updates run along splits data, indices and updates alike; a dim the
// indices address splits the data only, each device writing the updates
// that land in its shard (index − offset); a partial value passes where the
// op is linear in it.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace weft::graph;
using namespace weft::graph::rules;

/// data G(d), indices and updates whole → G(d): each device keeps the
/// updates whose index falls in its rows.
static void addIndexedSplit(Variants &variants, Operation *op, int64_t d) {
  const AxisLayout id = AxisLayout::identity();
  addVariant(variants, op, "split-indexed", {AxisLayout::gather(d), id, id},
             {AxisLayout::gather(d)})
      .needsGlobalOffset = true;
}

/// The partial variants of a scatter by its reduction (data is operand 0,
/// updates operand 2).
static void addScatterPartials(Variants &variants, Operation *op,
                               StringRef reduction) {
  if (reduction == "none" || reduction == "add") {
    // Replacing or adding is linear in (data, updates) together; a whole
    // operand is counted on one device.
    addPartial(variants, op, {0, 2});
    addPartial(variants, op, {0}, Combiner::Sum, /*once=*/{2}, "partial-once");
    addPartial(variants, op, {2}, Combiner::Sum, /*once=*/{0}, "partial-once");
  }
  if (reduction == "mul")
    // (Σ p_i) · Π u = Σ (p_i · Π u): linear in the data alone.
    addPartial(variants, op, {0}, Combiner::Sum, {}, "partial-data");
  if (reduction == "none" || reduction == "max")
    // Placing or keeping the larger value commutes with max.
    addPartial(variants, op, {0, 2}, Combiner::Max);
}

void ScatterElementsOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t axis = getAxis();
  addReplicated(variants, *this);
  for (int64_t d = 0, e = data.size(); d < e; ++d) {
    if (d == axis || idx[d] != data[d] || !splittable(data[d]))
      continue;
    addVariant(
        variants, *this, "split",
        {AxisLayout::gather(d), AxisLayout::gather(d), AxisLayout::gather(d)},
        {AxisLayout::gather(d)});
  }
  if (splittable(data[axis]))
    addIndexedSplit(variants, *this, axis);
  addScatterPartials(variants, *this, getReduction());
}

void ScatterNdOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t k = idx.back(), q = idx.size();
  addReplicated(variants, *this);
  for (int64_t d = 0; d < k; ++d)
    if (splittable(data[d]))
      addIndexedSplit(variants, *this, d);
  // The slice dims after the indexed ones: updates dim q − 1 + (d − k).
  for (int64_t d = k, e = data.size(); d < e; ++d)
    if (splittable(data[d]))
      addVariant(variants, *this, "split-slices",
                 {AxisLayout::gather(d), AxisLayout::identity(),
                  AxisLayout::gather(q - 1 + d - k)},
                 {AxisLayout::gather(d)});
  addScatterPartials(variants, *this, getReduction());
}
