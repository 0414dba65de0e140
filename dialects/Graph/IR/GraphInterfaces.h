//===- GraphInterfaces.h - Cost and sharding-rule interfaces -----*- C++ -*-===//

#ifndef WEFT_GRAPH_IR_GRAPHINTERFACES_H
#define WEFT_GRAPH_IR_GRAPHINTERFACES_H

#include "Graph/IR/GraphCost.h"
#include "mlir/IR/OpDefinition.h"
#include <string>

namespace weft::graph {

/// How one tensor of a sharding variant is laid out along one mesh axis
/// (DESIGN.md §3.2): whole on every device, split along `dim`, or a partial
/// value that must be combined.
struct AxisLayout {
  enum class Kind { Identity, Gather, Reduce };
  Kind kind = Kind::Identity;
  /// The split dimension for Gather.
  int64_t dim = -1;
};

/// One way to compute an op on distributed operands (DESIGN.md §3.3).
struct ShardingVariant {
  std::string name;
  llvm::SmallVector<AxisLayout, 4> operands;
  llvm::SmallVector<AxisLayout, 2> results;
  /// Whether the local recipe needs the shard's global offset.
  bool needsGlobalOffset = false;
};

} // namespace weft::graph

#include "Graph/IR/GraphInterfaces.h.inc"

#endif // WEFT_GRAPH_IR_GRAPHINTERFACES_H
