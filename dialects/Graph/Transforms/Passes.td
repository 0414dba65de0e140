//===- Passes.td - Graph dialect passes ----------------------*- tablegen -*-===//

#ifndef WEFT_GRAPH_PASSES
#define WEFT_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def UnpackProjections : Pass<"graph-unpack-projections", "::mlir::func::FuncOp"> {
  let summary = "split packed Q/K/V projections into one matmul per slice";
  let description = [{
    PyTorch exports the Q/K/V projection of `nn.MultiheadAttention` as one
    matmul with a packed 3H-column weight (`x @ W^T` through a transpose of
    the parameter, or a Gemm), an optional add of the packed bias, and three
    slices (or one split) of the activation along its last dim. A slice of
    the activation cannot be split by heads, so head-parallel attention is
    not expressible on it (DESIGN.md §3.1).

    This pass rewrites every slice (or split piece) of the last dim of such
    a value into the same computation over views of the operands: the
    matmul's weight is sliced along its column dim (through the transpose,
    on the parameter's row dim), and every elementwise addend or factor that
    has the packed dim (the bias) is sliced with the same window; operands
    broadcast along that dim stay whole. Column j of `x·W + b` is
    `x·W[:, j] + b[j]`, so the result is unchanged element for element.

    Applies only when every user of the packed value is such a slice or
    split, and every op between it and the matmul has one use, so the packed
    computation disappears.

    Example:

    ```mlir
    %wt = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<96x32xf32> -> tensor<32x96xf32>
    %p = graph.matmul %x, %wt : (tensor<16x2x32xf32>, tensor<32x96xf32>) -> tensor<16x2x96xf32>
    %q = graph.slice %p {starts = array<i64: 0, 0, 0>, limits = array<i64: 16, 2, 32>, steps = array<i64: 1, 1, 1>} : tensor<16x2x96xf32> -> tensor<16x2x32xf32>
    ```

    becomes

    ```mlir
    %wq = graph.slice %w {starts = array<i64: 0, 0>, limits = array<i64: 32, 32>, steps = array<i64: 1, 1>} : tensor<96x32xf32> -> tensor<32x32xf32>
    %wqt = graph.transpose %wq {perm = array<i64: 1, 0>} : tensor<32x32xf32> -> tensor<32x32xf32>
    %q = graph.matmul %x, %wqt : (tensor<16x2x32xf32>, tensor<32x32xf32>) -> tensor<16x2x32xf32>
    ```
  }];
  let dependentDialects = ["::weft::graph::GraphDialect"];
}

#endif // WEFT_GRAPH_PASSES
