//===- Passes.h - Graph dialect passes ---------------------------*- C++
//-*-===//

#ifndef WEFT_GRAPH_TRANSFORMS_PASSES_H
#define WEFT_GRAPH_TRANSFORMS_PASSES_H

#include "Graph/IR/GraphDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include <memory>

namespace weft::graph {

#define GEN_PASS_DECL
#include "Graph/Transforms/Passes.h.inc"

/// Replaces every erf-form GELU chain, x · 0.5 · (1 + erf(x / √2)) in any
/// association of the product, by one `graph.gelu` (the pass
/// graph-fuse-gelu; the importer runs it unless told not to). Returns how
/// many chains were fused.
unsigned fuseGelu(mlir::func::FuncOp func);

#define GEN_PASS_REGISTRATION
#include "Graph/Transforms/Passes.h.inc"

} // namespace weft::graph

#endif // WEFT_GRAPH_TRANSFORMS_PASSES_H
