//===- GraphDialect.cpp - The graph dialect -------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"

using namespace mlir;
using namespace weft::graph;

#include "Graph/IR/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Graph/IR/GraphOps.cpp.inc"
      >();
}
