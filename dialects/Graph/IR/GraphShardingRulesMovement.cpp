//===- GraphShardingRulesMovement.cpp - Sharding rules: data movement -----===//
//
// ShardingRuleOpInterface for reshape, flatten, transpose, concat, split,
// slice, gather, gather_elements and expand (docs/Design.md §3.3,
// docs/ShardingRules.md). These ops only move elements, so partial sums and
// maxima pass through them.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "ShardingRuleBuilder.h"
#include <numeric>

using namespace mlir;
using namespace weft::graph;
using namespace weft::graph::rules;

//===----------------------------------------------------------------------===//
// Reshape and flatten
//===----------------------------------------------------------------------===//

namespace {
/// Input and output dims of a reshape whose extents have equal products,
/// in order; size-1 dims are left out (they cannot be split).
struct ReshapeGroup {
  SmallVector<int64_t, 2> in, out;
  int64_t inProduct = 1, outProduct = 1;
};
} // namespace

/// Factors a reshape from `in` to `out` into the finest groups of dims with
/// equal products.
static SmallVector<ReshapeGroup> reshapeGroups(ArrayRef<int64_t> in,
                                               ArrayRef<int64_t> out) {
  SmallVector<int64_t> inDims, outDims;
  for (int64_t d = 0, e = in.size(); d < e; ++d)
    if (in[d] != 1)
      inDims.push_back(d);
  for (int64_t d = 0, e = out.size(); d < e; ++d)
    if (out[d] != 1)
      outDims.push_back(d);
  SmallVector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < inDims.size() && j < outDims.size()) {
    ReshapeGroup g;
    g.in.push_back(inDims[i]);
    g.out.push_back(outDims[j]);
    g.inProduct = in[inDims[i++]];
    g.outProduct = out[outDims[j++]];
    while (g.inProduct != g.outProduct) {
      if (g.inProduct < g.outProduct) {
        if (i == inDims.size())
          return groups;
        g.inProduct *= in[inDims[i]];
        g.in.push_back(inDims[i++]);
      } else {
        if (j == outDims.size())
          return groups;
        g.outProduct *= out[outDims[j]];
        g.out.push_back(outDims[j++]);
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

/// The reshape rule (docs/Design.md §3.3): Gather(d) maps to Gather(e) only for
/// the major-most dims d, e of one group. A shard of s rows of d covers
/// s · (minor input product) elements of the group, which must be whole rows
/// of e: s · inMinor ≡ 0 mod outMinor. With g = gcd(inMinor, outMinor), d's
/// shard sizes are multiples of outMinor / g and e's of inMinor / g.
static void getViewVariants(Operation *op, Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0)),
                    out = shapeOf(op->getResult(0));
  addReplicated(variants, op);
  for (const ReshapeGroup &g : reshapeGroups(in, out)) {
    int64_t d = g.in.front(), e = g.out.front();
    int64_t inMinor = g.inProduct / in[d], outMinor = g.outProduct / out[e];
    int64_t common = std::gcd(inMinor, outMinor);
    int64_t inAlign = outMinor / common, outAlign = inMinor / common;
    if (!splittable(in[d] / inAlign))
      continue;
    addVariant(variants, op, "split-group", {AxisLayout::gather(d, inAlign)},
               {AxisLayout::gather(e, outAlign)});
  }
  addMovementPartials(variants, op);
}

void ReshapeOp::getShardingVariants(Variants &variants) {
  getViewVariants(*this, variants);
}
void FlattenOp::getShardingVariants(Variants &variants) {
  getViewVariants(*this, variants);
}

//===----------------------------------------------------------------------===//
// Transpose, concat, split, slice
//===----------------------------------------------------------------------===//

void TransposeOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> perm = getPerm(), out = shapeOf(getResult());
  addReplicated(variants, *this);
  for (int64_t i = 0, e = perm.size(); i < e; ++i)
    if (splittable(out[i]))
      addVariant(variants, *this, "split", {AxisLayout::gather(perm[i])},
                 {AxisLayout::gather(i)});
  addMovementPartials(variants, *this);
}

void ConcatOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> out = shapeOf(getResult());
  int64_t axis = getAxis();
  if (axis < 0)
    axis += out.size();
  addReplicated(variants, *this);
  // A split of the concatenated dim has no local recipe (docs/Design.md §3.3):
  // the inputs are gathered first.
  for (int64_t d = 0, e = out.size(); d < e; ++d) {
    if (d == axis || !splittable(out[d]))
      continue;
    SmallVector<AxisLayout> operands(getInputs().size(), AxisLayout::gather(d));
    addVariant(variants, *this, "split", operands, {AxisLayout::gather(d)});
  }
  addMovementPartials(variants, *this);
}

void SplitOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t axis = getAxis();
  if (axis < 0)
    axis += in.size();
  addReplicated(variants, *this);
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (d == axis || !splittable(in[d]))
      continue;
    SmallVector<AxisLayout> results(getNumResults(), AxisLayout::gather(d));
    addVariant(variants, *this, "split", {AxisLayout::gather(d)}, results);
  }
  addMovementPartials(variants, *this);
}

void SliceOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    steps = getSteps();
  addReplicated(variants, *this);
  for (int64_t d = 0, e = in.size(); d < e; ++d) {
    if (!splittable(out[d]))
      continue;
    bool whole = starts[d] == 0 && limits[d] == in[d] && steps[d] == 1;
    if (whole) {
      addVariant(variants, *this, "split", {AxisLayout::gather(d)},
                 {AxisLayout::gather(d)});
      continue;
    }
    // Each device takes its part of the window from the whole input:
    // element k of its shard is input[start + (offset + k) · step].
    addVariant(variants, *this, "split-sliced", {AxisLayout::identity()},
               {AxisLayout::gather(d)})
        .needsGlobalOffset = true;
  }
  addMovementPartials(variants, *this);
}

//===----------------------------------------------------------------------===//
// Gather and expand
//===----------------------------------------------------------------------===//

void GatherOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t axis = getAxis(), idxRank = idx.size();
  const AxisLayout id = AxisLayout::identity();
  addReplicated(variants, *this);
  for (int64_t j = 0; j < idxRank; ++j)
    if (splittable(idx[j]))
      addVariant(variants, *this, "split-indices", {id, AxisLayout::gather(j)},
                 {AxisLayout::gather(axis + j)});
  for (int64_t d = 0, e = data.size(); d < e; ++d) {
    if (d == axis || !splittable(data[d]))
      continue;
    int64_t resultDim = d < axis ? d : d - 1 + idxRank;
    addVariant(variants, *this, "split-data", {AxisLayout::gather(d), id},
               {AxisLayout::gather(resultDim)});
  }
  // A split vocabulary: each device looks up the indices in its rows
  // (index − offset, masked to zero outside the shard); the sum of the
  // devices' results is the lookup.
  if (splittable(data[axis]) && isFloat(getData()))
    addVariant(variants, *this, "split-vocab", {AxisLayout::gather(axis), id},
               {AxisLayout::reduce()})
        .needsGlobalOffset = true;
  addPartial(variants, *this, {0}, Combiner::Sum);
  addPartial(variants, *this, {0}, Combiner::Max);
}

/// GatherElements reads, for each index, the data element at the index's
/// own position but along `axis`. Split along a dim d ≠ axis on which data
/// and indices have one extent, each device reads its rows of the data;
/// split along `axis` of the indices, each reads the whole data. A split of
/// the data along `axis` (or along a dim where the indices are smaller) has
/// no local recipe: the data is gathered first.
void GatherElementsOp::getShardingVariants(Variants &variants) {
  ArrayRef<int64_t> data = shapeOf(getData()), idx = shapeOf(getIndices());
  int64_t axis = getAxis();
  const AxisLayout id = AxisLayout::identity();
  addReplicated(variants, *this);
  for (int64_t d = 0, e = idx.size(); d < e; ++d) {
    if (!splittable(idx[d]))
      continue;
    if (d == axis)
      addVariant(variants, *this, "split-indices", {id, AxisLayout::gather(d)},
                 {AxisLayout::gather(d)});
    else if (data[d] == idx[d])
      addVariant(variants, *this, "split",
                 {AxisLayout::gather(d), AxisLayout::gather(d)},
                 {AxisLayout::gather(d)});
  }
  // Each result element is one data element: sums and maxima pass through.
  addPartial(variants, *this, {0}, Combiner::Sum);
  addPartial(variants, *this, {0}, Combiner::Max);
}

void ExpandOp::getShardingVariants(Variants &variants) {
  addReplicated(variants, *this);
  addBroadcastSplits(variants, *this);
  addMovementPartials(variants, *this);
}
