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

#define GEN_PASS_REGISTRATION
#include "Graph/Transforms/Passes.h.inc"

} // namespace weft::graph

#endif // WEFT_GRAPH_TRANSFORMS_PASSES_H
