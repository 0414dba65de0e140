//===- GraphDialect.h - The graph dialect ------------------------*- C++
//-*-===//

#ifndef WEFT_GRAPH_IR_GRAPHDIALECT_H
#define WEFT_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Graph/IR/GraphDialect.h.inc"

#endif // WEFT_GRAPH_IR_GRAPHDIALECT_H
