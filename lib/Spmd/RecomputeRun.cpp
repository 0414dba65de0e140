//===- RecomputeRun.cpp - Runs of recomputing locals in a plan ------------===//

#include "weft/Spmd/RecomputeRun.h"

using namespace weft::spmd;

bool RecomputeRun::leafDerived(mlir::Value v) {
  while (true) {
    mlir::Operation *def = v.getDefiningOp();
    if (!def)
      return true; // A block argument: a program input.
    if (llvm::isa<ParameterOp>(def))
      return true;
    if (llvm::isa<LocalOp>(def) || def->getNumOperands() == 0 ||
        def->getDialect() != v.getContext()->getLoadedDialect<SpmdDialect>())
      return false;
    v = def->getOperand(0); // A relayout: where it came from.
  }
}

RecomputeRun::Effect
RecomputeRun::visit(LocalOp op, bool grad,
                    llvm::SmallVectorImpl<mlir::Value> &checkpoints) {
  if (!grad)
    return Effect::Neutral;
  if (!op.getRecompute()) {
    inRun.clear();
    return Effect::Close;
  }
  for (mlir::Value in : op.getInputs())
    if (!inRun.contains(in) && !leafDerived(in) &&
        !llvm::is_contained(checkpoints, in))
      checkpoints.push_back(in);
  for (mlir::Value r : op.getResults())
    inRun.insert(r);
  return Effect::Join;
}
