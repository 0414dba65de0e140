//===- Interpreter.h - Single-device reference run of a graph program -*- C++
//-*-===//
//
// Runs `func.func @main` of a graph program on the CPU: the forward pass in
// program order, keeping every value, then reverse mode from d(loss) = 1,
// giving the gradient of every graph.parameter (docs/Design.md §9).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_INTERPRETER_H
#define WEFT_EXEC_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "weft/Exec/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <functional>

namespace weft::exec {

/// The tensors bound to a program's leaves: data inputs by their
/// `graph.input` argument name, parameters and buffers by name.
struct Bindings {
  llvm::StringMap<Tensor> inputs;
  llvm::StringMap<Tensor> parameters;
  llvm::StringMap<Tensor> buffers;
};

/// Finds `func.func @main` of a graph program (exit code 1 when absent or
/// when it does not return one scalar float loss).
llvm::Expected<mlir::func::FuncOp> findMain(mlir::ModuleOp module);

/// Finds `func.func @main` of a forward-only program (imported with
/// `ImportOptions::allOutputs`, or a training program): any number of
/// results, each a ranked tensor of a type the interpreter holds (exit code
/// 1 naming the first that is not).
llvm::Expected<mlir::func::FuncOp> findForwardMain(mlir::ModuleOp module);

/// The `graph.output` name of result `i` of `main` ("result<i>" if
/// unnamed).
std::string outputName(mlir::func::FuncOp main, unsigned i);

/// The `graph.input` name of argument `i` of `main` ("arg<i>" if unnamed).
std::string inputName(mlir::func::FuncOp main, unsigned i);

class GraphInterpreter {
public:
  /// `main` must outlive the interpreter. `seed` keys dropout masks.
  GraphInterpreter(mlir::func::FuncOp main, uint64_t seed = 0);

  mlir::func::FuncOp getMain() { return main; }
  /// Names of the program's parameters in program order (once each).
  std::vector<std::string> getParameterNames();

  /// Called before an op runs with its operands: fills `replacement` (one
  /// tensor per operand; an invalid tensor keeps that operand) and returns
  /// true to run the op, forward and backward, on the replacements instead.
  /// The op's operand values stay as they are for their other users. The
  /// plan check uses it to resolve ties at kinks (docs/Exec.md).
  using OperandAdjuster = std::function<bool(
      mlir::Operation &op, llvm::ArrayRef<const Tensor *> operands,
      llvm::SmallVectorImpl<Tensor> &replacement)>;
  void setOperandAdjuster(OperandAdjuster adjuster) {
    adjust = std::move(adjuster);
  }
  /// The operands `op` ran on in the last forward pass (its replacements
  /// where the adjuster gave some).
  llvm::SmallVector<const Tensor *, 4> operandsOf(mlir::Operation &op) const;
  /// The ops whose operands the adjuster replaced in the last forward pass.
  size_t numAdjustedOps() const { return adjusted.size(); }

  /// Called with "forward 12/340" / "backward 7/340" while running.
  void setProgress(std::function<void(llvm::StringRef)> callback) {
    progress = std::move(callback);
  }

  /// Runs the forward pass; every leaf must be bound (exit code 1 names the
  /// first that is not, or has the wrong shape or type).
  llvm::Error forward(const Bindings &bindings);
  /// The loss of the last forward pass (NaN when @main does not return
  /// one scalar float).
  double getLoss() const { return loss; }
  /// The values @main returned in the last forward pass, in order.
  llvm::SmallVector<const Tensor *> getOutputs() const;
  /// The value of `v` in the last forward pass, or nullptr.
  const Tensor *lookup(mlir::Value v) const;

  /// Reverse mode from d(loss) = 1 over the last forward pass. Parameters
  /// the loss does not depend on get zero gradients. Exit code 1 when @main
  /// returns no scalar float loss.
  llvm::Error backward();
  /// One op's step of reverse mode over the last forward pass: the
  /// gradients of `op`'s operands given those of its results in `grads` (a
  /// float result without one counts as zeros). `operandGrads[i]` is
  /// invalid where the op passes no gradient to operand i.
  llvm::Error gradientsOf(mlir::Operation &op,
                          const llvm::DenseMap<mlir::Value, Tensor> &grads,
                          llvm::SmallVectorImpl<Tensor> &operandGrads) const;
  /// Parameter gradients of the last backward pass, by parameter name.
  const llvm::StringMap<Tensor> &getParameterGradients() const {
    return parameterGrads;
  }

private:
  llvm::Error bindLeaf(mlir::Operation *op, const Bindings &bindings);
  void report(llvm::StringRef phase, size_t done, size_t total);

  mlir::func::FuncOp main;
  uint64_t seed;
  llvm::DenseMap<mlir::Operation *, uint64_t> dropoutIds;
  llvm::DenseMap<mlir::Value, Tensor> values;
  /// Replaced operands, by op (invalid tensors: the operand's value).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<Tensor, 2>> adjusted;
  OperandAdjuster adjust;
  /// Values whose gradient the backward pass must compute.
  llvm::DenseSet<mlir::Value> needsGrad;
  /// What @main returns; the loss when that is one scalar float.
  llvm::SmallVector<mlir::Value> returned;
  mlir::Value lossValue;
  double loss = 0;
  llvm::StringMap<Tensor> parameterGrads;
  std::function<void(llvm::StringRef)> progress;
};

} // namespace weft::exec

#endif // WEFT_EXEC_INTERPRETER_H
