//===- ShardingRuleBuilder.cpp - Helpers for ops' sharding rules ----------===//

#include "ShardingRuleBuilder.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace weft::graph;

//===----------------------------------------------------------------------===//
// Printing the interface's value types
//===----------------------------------------------------------------------===//

StringRef weft::graph::stringifyCombiner(Combiner c) {
  return c == Combiner::Sum ? "sum" : "max";
}

raw_ostream &weft::graph::operator<<(raw_ostream &os, const AxisLayout &l) {
  switch (l.kind) {
  case AxisLayout::Kind::Identity:
    return os << "id";
  case AxisLayout::Kind::Gather:
    os << "gather(" << l.dim;
    if (l.align != 1)
      os << ", align " << l.align;
    return os << ")";
  case AxisLayout::Kind::Reduce:
    return os << stringifyCombiner(l.combiner);
  }
  return os;
}

raw_ostream &weft::graph::operator<<(raw_ostream &os,
                                     const ShardingVariant &v) {
  auto printList = [&](ArrayRef<AxisLayout> layouts, bool operands) {
    os << "(";
    for (auto [i, l] : llvm::enumerate(layouts)) {
      if (i)
        os << ", ";
      os << l;
      if (operands && v.isOnceOperand(i))
        os << " once";
    }
    os << ")";
  };
  os << v.name << ": ";
  printList(v.operands, /*operands=*/true);
  os << " -> ";
  printList(v.results, /*operands=*/false);
  if (v.needsGlobalOffset)
    os << " offset";
  for (const RecipeAllReduce &r : v.allReduces) {
    os << " all_reduce(" << stringifyCombiner(r.combiner) << ", [";
    llvm::interleave(r.shape, os, "x");
    os << "])";
  }
  return os;
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

namespace weft::graph::rules {

ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

bool isFloat(Value v) {
  return v.getType().cast<RankedTensorType>().getElementType().isa<FloatType>();
}

bool allFloat(Operation *op) {
  return llvm::all_of(op->getOperands(), isFloat) &&
         llvm::all_of(op->getResults(), isFloat);
}

ShardingVariant &addVariant(Variants &variants, Operation *op, StringRef recipe,
                            ArrayRef<AxisLayout> operands,
                            ArrayRef<AxisLayout> results) {
  ShardingVariant &v = variants.emplace_back();
  v.name = (op->getName().stripDialect() + "." + recipe).str();
  v.operands.assign(operands.begin(), operands.end());
  v.results.assign(results.begin(), results.end());
  return v;
}

void addReplicated(Variants &variants, Operation *op) {
  SmallVector<AxisLayout> operands(op->getNumOperands());
  SmallVector<AxisLayout> results(op->getNumResults());
  addVariant(variants, op, "replicate", operands, results);
}

AxisLayout broadcastLayout(ArrayRef<int64_t> operand, ArrayRef<int64_t> result,
                           int64_t resultDim) {
  int64_t dim = resultDim - int64_t(result.size() - operand.size());
  if (dim < 0 || operand[dim] != result[resultDim])
    return AxisLayout::identity();
  return AxisLayout::gather(dim);
}

void addBroadcastSplits(Variants &variants, Operation *op, StringRef recipe,
                        bool needsGlobalOffset) {
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  for (int64_t d = 0, e = result.size(); d < e; ++d) {
    if (!splittable(result[d]))
      continue;
    SmallVector<AxisLayout> operands;
    for (Value v : op->getOperands())
      operands.push_back(broadcastLayout(shapeOf(v), result, d));
    SmallVector<AxisLayout> results(op->getNumResults(), AxisLayout::gather(d));
    addVariant(variants, op, recipe, operands, results).needsGlobalOffset =
        needsGlobalOffset;
  }
}

void addPartial(Variants &variants, Operation *op, ArrayRef<unsigned> partial,
                Combiner combiner, ArrayRef<unsigned> once, StringRef recipe) {
  auto floatOperand = [&](unsigned i) { return isFloat(op->getOperand(i)); };
  if (!llvm::all_of(partial, floatOperand) ||
      !llvm::all_of(once, floatOperand) ||
      !llvm::all_of(op->getResults(), isFloat))
    return;
  SmallVector<AxisLayout> operands(op->getNumOperands());
  for (unsigned i : partial)
    operands[i] = AxisLayout::reduce(combiner);
  SmallVector<AxisLayout> results(op->getNumResults(),
                                  AxisLayout::reduce(combiner));
  ShardingVariant &v = addVariant(variants, op, recipe, operands, results);
  v.onceOperands.assign(once.begin(), once.end());
}

void addMovementPartials(Variants &variants, Operation *op) {
  SmallVector<unsigned> all;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    all.push_back(i);
  addPartial(variants, op, all, Combiner::Sum);
  addPartial(variants, op, all, Combiner::Max);
}

} // namespace weft::graph::rules

void rules::addConvVariants(Variants &variants, mlir::Operation *op,
                            llvm::ArrayRef<int64_t> in,
                            llvm::ArrayRef<int64_t> w, int64_t group,
                            bool hasBias, ConvWeightLayout layout) {
  auto withBias = [&](llvm::SmallVector<AxisLayout> operands, AxisLayout bias) {
    if (hasBias)
      operands.push_back(bias);
    return operands;
  };
  const AxisLayout id = AxisLayout::identity();
  unsigned inDim = 1 - layout.outDim;
  addReplicated(variants, op);
  if (splittable(in[0]))
    addVariant(variants, op, "split-batch",
               withBias({AxisLayout::gather(0), id}, id),
               {AxisLayout::gather(0)});
  if (group == 1) {
    if (splittable(w[layout.outDim]))
      addVariant(variants, op, "split-out-channels",
                 withBias({id, AxisLayout::gather(layout.outDim)},
                          AxisLayout::gather(0)),
                 {AxisLayout::gather(1)});
    // Every input channel adds into every output: partial sums.
    if (splittable(in[1])) {
      ShardingVariant &v = addVariant(
          variants, op, "split-in-channels",
          withBias({AxisLayout::gather(1), AxisLayout::gather(inDim)}, id),
          {AxisLayout::reduce()});
      if (hasBias)
        v.onceOperands.push_back(2);
    }
  } else if (splittable(group)) {
    // Whole groups only: input channels in multiples of C/g, weight rows
    // in multiples of a group's rows, output channels (bias, result) in
    // multiples of a group's outputs.
    addVariant(variants, op, "split-groups",
               withBias({AxisLayout::gather(1, in[1] / group),
                         AxisLayout::gather(0, layout.rowsPerGroup)},
                        AxisLayout::gather(0, layout.outPerGroup)),
               {AxisLayout::gather(1, layout.outPerGroup)});
  }
  // Linear in the input and in the weight; the bias is added once.
  llvm::SmallVector<unsigned> once;
  if (hasBias)
    once.push_back(2);
  addPartial(variants, op, {0}, Combiner::Sum, once, "partial-input");
  addPartial(variants, op, {1}, Combiner::Sum, once, "partial-weight");
}
