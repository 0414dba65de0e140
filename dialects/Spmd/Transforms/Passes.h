//===- Passes.h - spmd dialect passes -----------------------------*- C++
//-*-===//
//
// spmd-synthesize (docs/Synthesis.md), spmd-assign-ratios,
// spmd-select-collectives, spmd-integerize (docs/Ratios.md) and
// spmd-dump; each runs alone on a module, the first four with
// `cluster=<yaml>`. Pipeline.h registers spmd-synthesis-pipeline.
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
