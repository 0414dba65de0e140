//===- GraphDialect.td - The graph dialect ------------------*- tablegen -*-===//
//
// The `graph` dialect says what a model means: the forward pass of a training
// step on global tensors, ending in a scalar loss. It has no notion of devices;
// the `spmd` dialect distributes it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_DIALECT
#define WEFT_GRAPH_DIALECT

include "mlir/IR/OpBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::weft::graph";
  let summary = "The forward computation of a training step on global tensors.";
  let description = [{
    A `graph` program is a `func.func` whose arguments are the model inputs
    (tokens, images, labels) and whose body declares parameters and buffers
    with `graph.parameter` / `graph.buffer` and computes a scalar loss from
    them. All types are ranked tensors with static shapes; the batch dimension
    is resolved before import. The backward pass is implicit (docs/Design.md §3.4).

    Elementwise functions are one op each (`graph.exp`, `graph.sin`,
    `graph.floor`, …) rather than one op with a function attribute: each
    states its own cost and what its backward keeps (the input, the result
    or nothing), prints as what it computes, and has no attribute to verify;
    they share their sharding rules and, in the interpreter, one kernel
    table.

    Example:

    ```mlir
    func.func @main(%x: tensor<32x784xf32>, %y: tensor<32xi64>) -> tensor<f32> {
      %w = graph.parameter "fc.weight" : tensor<784x10xf32>
      %logits = graph.matmul %x, %w : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
      %loss = graph.cross_entropy %logits, %y {reduction = "mean"} : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>
      return %loss : tensor<f32>
    }
    ```
  }];
  let useFoldAPI = kEmitFoldAdaptorFolder;
}

#endif // WEFT_GRAPH_DIALECT
