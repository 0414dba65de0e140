//===- Passes.td - Graph dialect passes ----------------------*- tablegen -*-===//

#ifndef WEFT_GRAPH_PASSES
#define WEFT_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def UnpackProjections : Pass<"graph-unpack-projections", "::mlir::func::FuncOp"> {
  let summary = "split packed Q/K/V projections into one matmul per slice";
  let description = [{
    PyTorch exports the Q/K/V projection of `nn.MultiheadAttention` as one
    matmul with a packed 3H-column weight (`x @ W^T` through a transpose of
    the parameter, or a Gemm), an optional add of the packed bias, and then
    takes the three pieces of the activation's last dim apart: PyTorch 1.x
    with three slices (or one split), PyTorch 2.x with a reshape of the
    packed dim to [3, H], reshapes and transposes that bring the 3 to the
    front, and a gather of index 0, 1 and 2 along it. A piece of the packed
    activation cannot be split by heads, so head-parallel attention is not
    expressible on it (docs/Design.md §3.1).

    This pass rewrites every window of the last dim of such a value into the
    same computation over views of the operands: the matmul's weight is
    sliced along its column dim (through the transpose, on the parameter's
    row dim), and every elementwise addend or factor that has the packed dim
    (the bias) is sliced with the same window; operands broadcast along that
    dim stay whole. Column j of `x·W + b` is `x·W[:, j] + b[j]`, so the
    result is unchanged element for element.

    The windows are slices of the last dim, split pieces along it, and
    picks. A pick is a gather of a constant one-element index i (negative
    counts from the end) along the dim of size k that a reshape split from
    the packed dim as [k, E], through a chain of transposes and of reshapes
    that otherwise only insert or drop size-1 dims, which leaves the other
    dims in the packed value's order with E last: it is the window
    [i·E, (i+1)·E). A pick whose result keeps size-1 dims (an index of rank
    1) gets a reshape of its projection.

    Applies only when every use of the packed value is such a window (a
    chain of views may branch, and each branch must end in picks), and every
    op between it and the matmul has one use, so the packed computation and
    its views disappear.

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

    and so does PyTorch 2.x's pick of the same columns:

    ```mlir
    %r0 = graph.reshape %p : tensor<16x2x96xf32> -> tensor<16x2x3x32xf32>
    %r1 = graph.reshape %r0 : tensor<16x2x3x32xf32> -> tensor<1x16x2x3x32xf32>
    %t = graph.transpose %r1 {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x16x2x3x32xf32> -> tensor<3x16x2x1x32xf32>
    %r2 = graph.reshape %t : tensor<3x16x2x1x32xf32> -> tensor<3x16x2x32xf32>
    %q = graph.gather %r2, %i0 {axis = 0 : i64} : (tensor<3x16x2x32xf32>, tensor<i64>) -> tensor<16x2x32xf32>
    ```

    where `%i0` is `graph.constant dense<0> : tensor<i64>`.
  }];
  let dependentDialects = ["::weft::graph::GraphDialect"];
}

def FuseGelu : Pass<"graph-fuse-gelu", "::mlir::func::FuncOp"> {
  let summary = "fuse the erf form of GELU into graph.gelu";
  let description = [{
    ONNX before opset 20 has no Gelu operator, so PyTorch (and weft-zoo)
    export `gelu(x)` as five elementwise ops: `x / √2`, `erf`, `+ 1`,
    `· x`, `· 0.5`. Each of them is an op the synthesizer must place and
    each keeps its own tensor for the backward pass: the chain keeps three
    tensors of x's size where `graph.gelu` keeps x alone (docs/Design.md §3.1).
    On BERT-MoE's expert FFNs that is 32 GB per layer at HAP's batch.

    The pass matches, from every `graph.erf`: its input `x / c` with c = √2
    (or `x · c` with c = 1/√2), its single user `+ 1`, and the product of x,
    0.5 and that sum in any association (`(x · a) · 0.5`, `x · (a · 0.5)`,
    `(x · 0.5) · a`), each intermediate with one use and the constants splat
    (within 1e-3, so bf16 exports match). The chain is replaced by
    `graph.gelu %x`, which the interpreter computes in the same erf form;
    constants left unused are erased. Anything else is left alone.

    The importer runs the same rewrite after import unless `--no-fuse` is
    given, so weftc, weft-run and weft-translate see the same program.

    Example:

    ```mlir
    %c = graph.constant dense<1.41421354> : tensor<f32> : tensor<f32>
    %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
    %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
    %t = graph.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %e = graph.erf %t : tensor<4x8xf32>
    %a = graph.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %m = graph.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %y = graph.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```

    becomes

    ```mlir
    %y = graph.gelu %x : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["::weft::graph::GraphDialect"];
}

#endif // WEFT_GRAPH_PASSES
