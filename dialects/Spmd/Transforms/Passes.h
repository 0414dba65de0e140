//===- Passes.h - spmd dialect passes ----------------------------*- C++
//-*-===//
//
// spmd-assign-ratios, spmd-select-collectives, spmd-integerize
// (docs/Ratios.md). Each runs alone on a plan module with `cluster=<yaml>`.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_TRANSFORMS_PASSES_H
#define WEFT_SPMD_TRANSFORMS_PASSES_H

#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include <memory>

namespace weft::spmd {

#define GEN_PASS_DECL
#include "Spmd/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Spmd/Transforms/Passes.h.inc"

} // namespace weft::spmd

#endif // WEFT_SPMD_TRANSFORMS_PASSES_H
