//===- StageProgram.h - A graph program cut into stages (lib/Synth) -*- C++
//-*-===//
//
// docs/Pipeline.md "Synthesis": the graph program's ops in program order
// (leaves and the ops computed from leaves alone set aside: every stage
// that uses them gets its own copy), the activations crossing each
// position, the cut points (positions with the fewest crossing values that
// split no parameter's uses) and the sub-program of a range of ops: the
// model's inputs plus the activations crossing into it as arguments, the
// activations crossing out of it (or the loss) as results.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_STAGEPROGRAM_H
#define WEFT_LIB_SYNTH_STAGEPROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace weft::synth {

class StageProgram {
public:
  /// Errors (bad input): no @main, an op with regions.
  static llvm::Expected<StageProgram> of(mlir::ModuleOp graph);

  mlir::ModuleOp graph() const { return module; }
  mlir::func::FuncOp main() const { return func; }
  /// Ops of the program that are not leaves, in program order.
  llvm::ArrayRef<mlir::Operation *> ops() const { return order; }
  unsigned size() const { return order.size(); }
  /// Values made by ops [0, c) and used by ops [c, size()) or returned, in
  /// program order (c in 0..size()).
  std::vector<mlir::Value> crossing(unsigned c) const;
  /// Bytes of crossing(c) (IR element types).
  double crossingBytes(unsigned c) const;
  /// Positions 0 < c < size() where the fewest values cross and no
  /// parameter is used on both sides, ascending.
  std::vector<unsigned> cutPoints() const;
  /// Names of the parameters op `p` reads (directly or through leaves).
  const std::vector<mlir::Operation *> &parametersOf(unsigned p) const {
    return params[p];
  }
  /// The sub-program of ops [a, b): @main takes the program's arguments,
  /// then crossing(a); returns crossing(b), or the program's results when
  /// b == size(). Leaves it uses are copied in.
  mlir::OwningOpRef<mlir::ModuleOp> subProgram(unsigned a, unsigned b) const;

private:
  bool isLeaf(mlir::Operation *op) const { return leaves.contains(op); }
  // Op handles: const methods call their non-const accessors.
  mutable mlir::ModuleOp module;
  mutable mlir::func::FuncOp func;
  std::vector<mlir::Operation *> order;
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  llvm::DenseSet<mlir::Operation *> leaves;
  /// Per op of `order`: graph.parameter ops it reads.
  std::vector<std::vector<mlir::Operation *>> params;
  /// Per value made by an op of `order`: the last position using it
  /// (size() for the return).
  llvm::DenseMap<mlir::Value, unsigned> lastUse;
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_STAGEPROGRAM_H
