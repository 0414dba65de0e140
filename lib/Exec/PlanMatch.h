//===- PlanMatch.h - Which graph value each plan value holds ----*- C++ -*-===//
//
// Checks that an spmd plan computes a graph program (the k-th spmd.local
// holds the k-th non-leaf graph op with the same attributes, types and
// operands; parameters match by name and type, inputs by position) and maps
// every plan value to the graph value it is a distributed copy of.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_PLANMATCH_H
#define WEFT_LIB_EXEC_PLANMATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

namespace weft::exec {

class PlanMatcher {
public:
  PlanMatcher(mlir::func::FuncOp graphMain, mlir::func::FuncOp planMain)
      : graphMain(graphMain), planMain(planMain) {}

  /// Errors (exit code 1) name the first op, parameter or input that is not
  /// the model's.
  llvm::Error match();
  /// The graph value `planValue` holds (a copy of); null if none.
  mlir::Value graphValueOf(mlir::Value planValue) const {
    return toGraph.lookup(planValue);
  }
  /// The graph op an spmd.local computes (null for other ops).
  mlir::Operation *graphOpOf(mlir::Operation *planOp) const {
    return opToGraph.lookup(planOp);
  }
  /// The spmd.local computing graph op `graphOp` (null if none).
  mlir::Operation *localOf(mlir::Operation *graphOp) const {
    return graphToOp.lookup(graphOp);
  }

private:
  mlir::func::FuncOp graphMain, planMain;
  llvm::DenseMap<mlir::Value, mlir::Value> toGraph;
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> opToGraph, graphToOp;
};

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_PLANMATCH_H
