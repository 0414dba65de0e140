//===- RecipeStats.cpp - All-reduces inside local recipes -----------------===//

#include "weft/Spmd/RecipeStats.h"
#include "Graph/IR/GraphOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
using namespace weft::spmd;

/// The operand whose dims the statistic follows: the first of the statistic's
/// rank whose every dim equals the statistic's or is reduced to 1 in it.
static void attachOperand(mlir::Operation *op, RecipeStat &stat) {
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    auto type = v.getType().dyn_cast<mlir::RankedTensorType>();
    if (!type || type.getRank() != int64_t(stat.shape.size()) ||
        stat.shape.empty())
      continue;
    bool fits = true;
    for (auto [s, e] : llvm::zip(stat.shape, type.getShape()))
      fits &= s == e || s == 1;
    if (!fits)
      continue;
    stat.operand = int(i);
    for (auto [d, s] : llvm::enumerate(stat.shape))
      stat.fromDim.push_back(s == type.getDimSize(d) ? int(d) : -1);
    return;
  }
}

llvm::SmallVector<RecipeStat, 2>
spmd::recipeStats(mlir::Operation *op,
                  llvm::ArrayRef<const graph::ShardingVariant *> perAxis,
                  llvm::ArrayRef<int64_t> axisSizes) {
  llvm::SmallVector<RecipeStat, 2> out;
  bool loss = llvm::isa<graph::CrossEntropyOp, graph::NllLossOp>(op);
  for (auto [a, v] : llvm::enumerate(perAxis)) {
    if (!v || a >= axisSizes.size() || axisSizes[a] <= 1)
      continue;
    for (const graph::RecipeAllReduce &r : v->allReduces) {
      RecipeStat stat;
      stat.axis = unsigned(a);
      stat.combiner = r.combiner;
      stat.shape.assign(r.shape.begin(), r.shape.end());
      stat.hasDual = r.combiner == graph::Combiner::Sum && !loss;
      attachOperand(op, stat);
      out.push_back(std::move(stat));
    }
  }
  return out;
}

llvm::SmallVector<RecipeStat, 2>
spmd::recipeStats(mlir::Operation *op, llvm::StringRef variants,
                  llvm::ArrayRef<int64_t> axisSizes) {
  auto iface = llvm::dyn_cast<graph::ShardingRuleOpInterface>(op);
  if (!iface)
    return {};
  llvm::SmallVector<graph::ShardingVariant, 8> all;
  iface.getShardingVariants(all);
  llvm::SmallVector<llvm::StringRef, 4> names;
  llvm::SplitString(variants, names, ",");
  llvm::SmallVector<const graph::ShardingVariant *, 4> perAxis;
  for (llvm::StringRef name : names) {
    name = name.trim();
    // Variants of one name differ in the dim they split, not in their
    // statistics' shapes.
    auto it = llvm::find_if(
        all, [&](const graph::ShardingVariant &v) { return v.name == name; });
    perAxis.push_back(it == all.end() ? nullptr : &*it);
  }
  return recipeStats(op, perAxis, axisSizes);
}

mlir::Operation *spmd::recipeOp(LocalOp local) {
  for (mlir::Operation &op : local.getBody().front())
    if (llvm::isa<graph::ShardingRuleOpInterface>(op))
      return &op;
  return nullptr;
}

double spmd::statElements(const RecipeStat &stat,
                          llvm::ArrayRef<int64_t> operandShard) {
  double elements = 1;
  for (auto [d, s] : llvm::enumerate(stat.shape)) {
    int from = d < stat.fromDim.size() ? stat.fromDim[d] : -1;
    elements *= from >= 0 && size_t(from) < operandShard.size()
                    ? double(operandShard[from])
                    : double(s);
  }
  return elements;
}
