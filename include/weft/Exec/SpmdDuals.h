//===- SpmdDuals.h - The dual table the spmd interpreter reads ----*- C++
//-*-===//

#ifndef WEFT_EXEC_SPMDDUALS_H
#define WEFT_EXEC_SPMDDUALS_H

#include "weft/Spmd/Duals.h"
#include <functional>

namespace weft::exec {

/// The backward of a collective: by default `weft::spmd::dualOf(op)`, the
/// table the evaluator reads. Replaceable so that tests can run a plan with
/// a wrong dual and see the gradients differ.
using DualLookup =
    std::function<std::optional<spmd::CollectiveDual>(mlir::Operation *)>;

/// `lookup` if set, else the real table.
inline std::optional<spmd::CollectiveDual> lookupDual(const DualLookup &lookup,
                                                      mlir::Operation *op) {
  return lookup ? lookup(op) : spmd::dualOf(op);
}

} // namespace weft::exec

#endif // WEFT_EXEC_SPMDDUALS_H
