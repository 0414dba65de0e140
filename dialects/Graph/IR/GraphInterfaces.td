//===- GraphInterfaces.td - Cost and sharding-rule interfaces -*- tablegen -*-===//

#ifndef WEFT_GRAPH_INTERFACES
#define WEFT_GRAPH_INTERFACES

include "mlir/IR/OpBase.td"

def CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::weft::graph";
  let description = [{
    The work an op does, as a function of the (possibly sharded) shapes of its
    operands and results: forward FLOPs, backward FLOPs, bytes moved to and
    from memory in the forward pass, and bytes of activations the backward
    pass needs kept. The cost model (lib/Cost) turns these into time on a
    device; the spmd evaluator calls it with shard shapes.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the op's work for the given operand and result shapes.",
      /*retTy=*/"::weft::graph::OpCost",
      /*methodName=*/"getCost",
      /*args=*/(ins "const ::weft::graph::ShardShapes &":$shapes)>,
  ];
  let extraSharedClassDeclaration = [{
    /// The op's work on its global (unsharded) shapes.
    ::weft::graph::OpCost getGlobalCost() {
      return $_op.getCost(::weft::graph::ShardShapes::of($_op.getOperation()));
    }
  }];
}

def ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::weft::graph";
  let description = [{
    Enumerates the ways an op can be computed on distributed operands along
    one mesh axis (docs/Design.md §3.3): each variant names its local recipe and
    gives the layout each operand must have (`Identity`, `Gather(dim)` or
    `Reduce(combiner)`), the layout of each result, whether the recipe needs
    the shard's global offset, which operands enter a partial result once
    (a bias), the all-reduces of statistics inside the recipe, and for split
    dims the multiple their shard sizes must respect (reshape alignment).
    Every graph op implements it; docs/ShardingRules.md is the full table.
    The evaluator, the reference interpreter and the synthesizer read only
    this interface.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Appends the op's sharding variants to `variants`.",
      /*retTy=*/"void",
      /*methodName=*/"getShardingVariants",
      /*args=*/(ins "::llvm::SmallVectorImpl<::weft::graph::ShardingVariant> &":$variants)>,
  ];
}

#endif // WEFT_GRAPH_INTERFACES
