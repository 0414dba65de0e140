//===- GraphOps.h - The graph dialect's operations ---------------*- C++
//-*-===//

#ifndef WEFT_GRAPH_IR_GRAPHOPS_H
#define WEFT_GRAPH_IR_GRAPHOPS_H

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphInterfaces.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "Graph/IR/GraphOps.h.inc"

#endif // WEFT_GRAPH_IR_GRAPHOPS_H
