//===- OpKernels.h - Run one graph op forward or backward --------*- C++
//-*-===//
//
// The bridge from `graph` ops to the kernels: reads an op's attributes and
// calls the kernel of its family. The single-device interpreter calls it
// for every op; the SPMD interpreter will call it on shards (with a
// GlobalView for the ops whose result depends on global positions).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_OPKERNELS_H
#define WEFT_EXEC_OPKERNELS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "weft/Exec/Dropout.h"
#include "weft/Exec/Tensor.h"
#include "llvm/Support/Error.h"
#include <optional>

namespace weft::exec {

/// What an op's kernels need beyond operands and attributes.
struct OpContext {
  /// Seed of dropout masks (weft-run --seed).
  uint64_t seed = 0;
  /// The ordinal of a dropout op among the graph program's dropout ops, in
  /// program order: the mask's stream.
  uint64_t dropoutId = 0;
  /// Where the op's result sits in the whole tensor (dropout on a shard).
  GlobalView view;
};

/// The interpreter's element type for an MLIR type: f32/f64 → F32 (f64 is
/// computed in f32), bf16, f16, i1, other integers → I64.
std::optional<ElementType> elementTypeOf(mlir::Type type);

/// The tensor held by a dense elements attribute.
llvm::Expected<Tensor> tensorFromAttr(mlir::ElementsAttr attr);

/// Computes the results of `op` (any graph op but parameter and buffer,
/// which the interpreter binds). Errors: unsupported ops, indices or labels
/// out of range (exit code 1).
llvm::Error runOpForward(mlir::Operation *op,
                         llvm::ArrayRef<const Tensor *> operands,
                         const OpContext &ctx,
                         llvm::SmallVectorImpl<Tensor> &results);

/// The loss of a cross_entropy or nll_loss op in double precision (the
/// result tensor holds it rounded to f32); none for other ops.
std::optional<double> preciseLoss(mlir::Operation *op,
                                  llvm::ArrayRef<const Tensor *> operands);

/// The vector-Jacobian product: one gradient per operand (an invalid Tensor
/// for operands that have none, e.g. integers), given the forward operands
/// and results and one gradient per result (zeros where a result is
/// unused; nullptr for non-float results).
llvm::Error runOpBackward(mlir::Operation *op,
                          llvm::ArrayRef<const Tensor *> operands,
                          llvm::ArrayRef<const Tensor *> results,
                          llvm::ArrayRef<const Tensor *> resultGrads,
                          const OpContext &ctx,
                          llvm::SmallVectorImpl<Tensor> &operandGrads);

} // namespace weft::exec

#endif // WEFT_EXEC_OPKERNELS_H
