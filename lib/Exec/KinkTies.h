//===- KinkTies.h - Elements of non-smooth ops that sit at a kink -*- C++
//-*-===//
//
// A plan adds partial sums in another order than the single-device
// reference, so an op's input may differ from the reference's by a
// reassociation error. Where a piecewise op (relu, clip, max, min, compare,
// max_pool, reduce_max, top2_gating) has an input element within that
// tolerance of a kink, the two runs may take different pieces: equally
// right answers whose gradients differ by O(1). The plan check treats such
// elements as ties: the reference takes the plan's side (its input value,
// when it agrees within the tolerance). docs/Exec.md, "Ties at kinks".
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EXEC_KINKTIES_H
#define WEFT_LIB_EXEC_KINKTIES_H

#include "mlir/IR/Operation.h"
#include "weft/Exec/Tensor.h"
#include <vector>

namespace weft::exec {

/// The reassociation tolerance of a value: atol + rtol·(|x| + 0.01·max|X|)
/// (the plan check's forward tolerance).
struct TieTolerance {
  double rtol = 1e-4, atol = 1e-6;
};

/// Whether `op` is piecewise (has kinks the plan check resolves).
bool hasKinks(mlir::Operation &op);

/// Per operand of `op`, the elements within the tolerance of a kink (empty
/// for operands without any, e.g. integers). `operands` are the reference's.
std::vector<std::vector<bool>>
kinkElements(mlir::Operation &op, llvm::ArrayRef<const Tensor *> operands,
             const TieTolerance &tol);

/// Replacement operands for `op` taking the plan's values (`plan`, whole
/// tensors; nullptr where unknown) at the reference's tie elements whose
/// plan value agrees within the tolerance. Returns the number of elements
/// taken; `replacement` gets one tensor per operand (invalid: unchanged).
int64_t resolveTies(mlir::Operation &op,
                    llvm::ArrayRef<const Tensor *> reference,
                    llvm::ArrayRef<const Tensor *> plan,
                    const TieTolerance &tol,
                    llvm::SmallVectorImpl<Tensor> &replacement);

} // namespace weft::exec

#endif // WEFT_LIB_EXEC_KINKTIES_H
