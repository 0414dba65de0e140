//===- GraphOps.td - The graph dialect's operations --------*- tablegen -*-===//
//
// Every op implements CostOpInterface; its `getCost` body is given by the
// `cost` template argument and composed from the helpers of GraphCost.h.
// Every op implements ShardingRuleOpInterface in GraphShardingRules*.cpp
// (the table of docs/ShardingRules.md).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_OPS
#define WEFT_GRAPH_OPS

include "Graph/IR/GraphDialect.td"
include "Graph/IR/GraphInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Graph_Op<string mnemonic, list<Trait> traits = [],
               string cost = "return ::weft::graph::freeCost();">
    : Op<Graph_Dialect, mnemonic,
         !listconcat(traits, [DeclareOpInterfaceMethods<CostOpInterface>,
                              DeclareOpInterfaceMethods<ShardingRuleOpInterface>])> {
  let extraClassDefinition =
      "::weft::graph::OpCost $cppClass::getCost("
      "const ::weft::graph::ShardShapes &shapes) {\n" # cost # "\n}\n";
}

def Graph_Tensor : RankedTensorOf<[AnyFloat, AnyInteger]>;
def Graph_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Graph_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Leaves: parameters, buffers, constants
//===----------------------------------------------------------------------===//

class Graph_LeafOp<string mnemonic, string what> : Graph_Op<mnemonic, [Pure]> {
  let arguments = (ins StrAttr:$name, OptionalAttr<ElementsAttr>:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  let description = "Declares " # what # [{ named `name` (the ONNX
    initializer or input name). Its value is absent unless the model was
    imported with `--with-weights`, in which case `value` holds it and must
    have the result's type.

    Example:

    ```mlir
    %w = graph.}] # mnemonic # [{ "encoder.0.attn.q.weight" : tensor<768x768xf32>
    ```
  }];
}

def Graph_ParameterOp : Graph_LeafOp<"parameter",
    "a trainable parameter (it receives a gradient and optimizer state)"> {
  let summary = "a trainable parameter";
}

def Graph_BufferOp : Graph_LeafOp<"buffer",
    "a non-trainable tensor carried by the model (running statistics, masks, "
    "position ids): no gradient, no optimizer state,"> {
  let summary = "a non-trainable model tensor";
}

def Graph_ConstantOp : Graph_Op<"constant", [Pure, ConstantLike]> {
  let summary = "a constant tensor";
  let description = [{
    A compile-time constant, e.g. the scale of attention scores or a folded
    shape computation.

    Example:

    ```mlir
    %c = graph.constant dense<8.0> : tensor<f32> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul", [Pure],
    "return ::weft::graph::matmulCost(shapes);"> {
  let summary = "batched matrix product with broadcast batch dimensions";
  let description = [{
    `result[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n]`, with numpy
    broadcasting of the leading (batch) dimensions (ONNX MatMul). Both
    operands have rank ≥ 2. Forward FLOPs are 2·M·N·K per batch element and
    backward FLOPs 4·M·N·K (one product for each operand's gradient).

    Example:

    ```mlir
    %y = graph.matmul %x, %w : (tensor<32x128x768xf32>, tensor<768x3072xf32>) -> tensor<32x128x3072xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_Conv2dOp : Graph_Op<"conv2d", [Pure],
    "return ::weft::graph::conv2dCost(shapes, getGroup());"> {
  let summary = "2-D convolution (NCHW, weights OIHW)";
  let description = [{
    ONNX Conv on 4-D tensors: `input` is N×C×H×W, `weight` is
    O×(C/group)×KH×KW, the optional `bias` has O elements. `pads` are
    [top, left, bottom, right]. ONNX's 1-d convolutions are imported as 2-d
    ones with a unit height (reshapes around the op).

    Example:

    ```mlir
    %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<32x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<32x64x32x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                   Optional<Graph_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ConvTranspose2dOp : Graph_Op<"conv_transpose2d", [Pure],
    "return ::weft::graph::convTranspose2dCost(shapes);"> {
  let summary = "2-D transposed convolution (NCHW, weights C×(O/group)×KH×KW)";
  let description = [{
    ONNX ConvTranspose on 4-D tensors, the adjoint of `conv2d`: every input
    element adds its value times the kernel into the output window it
    maps to. `input` is N×C×H×W, `weight` is C×(O/group)×KH×KW (input
    channels first, as ONNX and PyTorch store it), the optional `bias` has
    O elements. The result is N×O×OH×OW with
    OH = (H − 1)·stride + dilation·(KH − 1) + 1 − top − bottom +
    output_padding (OW likewise): `pads` = [top, left, bottom, right] crop
    the full output, `output_padding` adds rows and columns at the bottom
    and right that only the bias reaches. ONNX's 1-d transposed
    convolutions are imported as 2-d ones with a unit height. The backward
    of the input is a `conv2d` of the result's gradient with the same
    weight. Forward FLOPs are 2 · inputs · (O/group)·KH·KW (plus one per
    output for the bias); backward FLOPs twice that.

    Example:

    ```mlir
    %y = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<32x64x16x16xf32>, tensor<64x32x3x3xf32>, tensor<32xf32>) -> tensor<32x32x32x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                   Optional<Graph_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

include "Graph/IR/GraphOpsElementwise.td"

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

class Graph_SoftmaxLikeOp<string mnemonic, string math>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType],
               "return ::weft::graph::softmaxCost(shapes);"> {
  let summary = math # " along one axis";
  let description = "Computes " # math # [{ along `axis` (negative values
    count from the end), numerically stabilised by subtracting the maximum.

    Example:

    ```mlir
    %p = graph.}] # mnemonic # [{ %scores {axis = -1 : i64} : tensor<32x12x128x128xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_SoftmaxOp : Graph_SoftmaxLikeOp<"softmax", "softmax">;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure],
    "return ::weft::graph::normCost(shapes);"> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises `input` over the dimensions from `axis` to the last to zero
    mean and unit variance (with `epsilon`), then applies the elementwise
    affine `scale` and `bias`, whose shape is that of the normalised
    dimensions (ONNX LayerNormalization).

    Example:

    ```mlir
    %y = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-12 : f64} : (tensor<32x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$bias, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_BatchNormOp : Graph_Op<"batch_norm", [Pure],
    "return ::weft::graph::normCost(shapes);"> {
  let summary = "batch normalisation over N, H, W per channel";
  let description = [{
    ONNX BatchNormalization on an N×C×… input. With `training` set, the
    statistics are those of the batch (a reduction over every dimension but
    the channel) and `running_mean`/`running_var` are buffers updated with
    `momentum`; otherwise the running statistics are used and the op is an
    elementwise affine map. `scale` and `bias` have C elements.

    Example:

    ```mlir
    %y = graph.batch_norm %x, %g, %b, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<32x64x16x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<32x64x16x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$bias, Graph_FloatTensor:$running_mean,
                   Graph_FloatTensor:$running_var, F64Attr:$epsilon,
                   F64Attr:$momentum, BoolAttr:$training);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string math>
    : Graph_Op<mnemonic, [Pure], "return ::weft::graph::reduceCost(shapes);"> {
  let summary = math # " over some axes";
  let description = "Reduces `input` by " # math # [{ over `axes` (sorted,
    non-negative after import), keeping them as size-1 dimensions when
    `keepdims` is set.

    Example:

    ```mlir
    %m = graph.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims = true} : tensor<32x128x768xf32> -> tensor<32x128x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes,
                   BoolAttr:$keepdims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "a sum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "the mean">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "the maximum">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with another shape";
  let description = [{
    Same elements in row-major order, another static shape with the same
    number of elements. Free: no data moves.

    Example:

    ```mlir
    %h = graph.reshape %x : tensor<32x128x768xf32> -> tensor<32x128x12x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure],
    "return ::weft::graph::movementCost(shapes);"> {
  let summary = "permute dimensions";
  let description = [{
    `result` dimension i is `input` dimension `perm[i]`.

    Example:

    ```mlir
    %t = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<32x128x12x64xf32> -> tensor<32x12x128x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure],
    "return ::weft::graph::movementCost(shapes);"> {
  let summary = "join tensors along one axis";
  let description = [{
    Concatenates the inputs along `axis`; all other dimensions agree.

    Example:

    ```mlir
    %c = graph.concat %cls, %patches {axis = 1 : i64} : (tensor<32x1x768xf32>, tensor<32x64x768xf32>) -> tensor<32x65x768xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Graph_SplitOp : Graph_Op<"split", [Pure],
    "return ::weft::graph::movementCost(shapes);"> {
  let summary = "cut a tensor into pieces along one axis";
  let description = [{
    Splits `input` along `axis` into consecutive pieces whose extents are the
    results' extents on that axis.

    Example:

    ```mlir
    %q, %k, %v = graph.split %qkv {axis = 2 : i64} : (tensor<32x128x2304xf32>) -> (tensor<32x128x768xf32>, tensor<32x128x768xf32>, tensor<32x128x768xf32>)
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $results)";
  let hasVerifier = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [Pure],
    "return ::weft::graph::movementCost(shapes);"> {
  let summary = "strided window of a tensor";
  let description = [{
    Takes, in every dimension d, the elements `starts[d]`, `starts[d] +
    steps[d]`, … below `limits[d]` (all static, one entry per dimension,
    steps positive; ONNX Slice after normalisation).

    Example:

    ```mlir
    %cls = graph.slice %x {starts = array<i64: 0, 0, 0>, limits = array<i64: 32, 1, 768>, steps = array<i64: 1, 1, 1>} : tensor<32x65x768xf32> -> tensor<32x1x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_GatherElementsOp : Graph_Op<"gather_elements", [Pure],
    "return ::weft::graph::gatherCost(shapes);"> {
  let summary = "pick elements along one axis by per-element indices";
  let description = [{
    ONNX GatherElements (PyTorch's `gather` and `take_along_dim`): `indices`
    has the rank of `data` and no larger extent in any dimension but `axis`.
    The result has the shape of `indices`; its element at position p is the
    element of `data` at p with the `axis` coordinate replaced by
    `indices[p]` (negative indices count from the end of that dimension).
    The backward adds each result gradient into a zero tensor of the data's
    shape at the position it was read from (an element read twice gets
    both); `indices` have no gradient.

    Example:

    ```mlir
    %p = graph.gather_elements %logp, %labels {axis = 1 : i64} : (tensor<32x1000xf32>, tensor<32x1xi64>) -> tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure],
    "return ::weft::graph::gatherCost(shapes);"> {
  let summary = "index into one axis (embedding lookup)";
  let description = [{
    ONNX Gather: `result[i..., j..., k...] = data[i..., indices[j...], k...]`
    where `indices` replaces dimension `axis` of `data`. An embedding lookup
    is a gather on axis 0 of a parameter; its backward scatters-adds into the
    table.

    Example:

    ```mlir
    %e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<32x128xi64>) -> tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Graph_ScatterOp<string mnemonic, string summaryText, string what,
                      string example>
    : Graph_Op<mnemonic, [Pure, AllTypesMatch<["data", "result"]>],
               "return ::weft::graph::scatterCost(shapes, getReduction());"> {
  let summary = summaryText;
  let description = "\n    " # what # [{ The result is a copy of `data` in which
    each element of `updates` is combined into the position its index names,
    by `reduction`: `none` writes it (of several updates to one position the
    last one in row-major order wins), `add` and `mul` add it or multiply by
    it, `max` and `min` keep the larger or smaller value. Negative indices
    count from the end of their dimension.

    Gradients: with `none`, the result's gradient flows to the update that
    was written last at a position and to `data` everywhere else; with
    `add`, to `data` everywhere and to each update at its position; with
    `mul`, to `data` times the product of the updates at its position and to
    each update times `data` and the other updates there; with `max` and
    `min`, to the value that was kept (`data` on ties, then the earliest
    update). `indices` have no gradient.

    Example:

    ```mlir
    }] # example # [{
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   Graph_Tensor:$updates,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let hasVerifier = 1;
}

def Graph_ScatterElementsOp : Graph_ScatterOp<"scatter_elements",
    "write updates along one axis at per-element indices",
    [{ONNX ScatterElements: `indices` and `updates` have one shape, of the
    rank of `data` and no larger than it in any dimension but `axis`; the
    update at position p goes to `data` at p with its `axis` coordinate
    replaced by `indices[p]`.}],
    "%y = graph.scatter_elements %data, %idx, %upd {axis = 1 : i64, reduction = \"add\"} : (tensor<32x128xf32>, tensor<32x4xi64>, tensor<32x4xf32>) -> tensor<32x128xf32>"> {
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   Graph_Tensor:$updates, I64Attr:$axis,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Graph_ScatterNdOp : Graph_ScatterOp<"scatter_nd",
    "write slices at index tuples",
    [{ONNX ScatterND: the last dimension of `indices` (extent k, at most the
    rank of `data`) holds index tuples into the first k dimensions of
    `data`; each tuple addresses a slice of the remaining dimensions, and
    `updates` has the shape `indices.shape[:-1] + data.shape[k:]`, one slice
    per tuple.}],
    "%y = graph.scatter_nd %labels, %idx, %upd : (tensor<32x128xi64>, tensor<32x1x2xi64>, tensor<32x1xi64>) -> tensor<32x128xi64>"> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Graph_FlattenOp : Graph_Op<"flatten", [Pure]> {
  let summary = "collapse to two dimensions";
  let description = [{
    ONNX Flatten: the dimensions before `axis` become the first result
    dimension and the rest the second. Free, like a reshape.

    Example:

    ```mlir
    %f = graph.flatten %x {axis = 1 : i64} : tensor<32x512x1x1xf32> -> tensor<32x512xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Resampling
//===----------------------------------------------------------------------===//

def Graph_ResizeOp : Graph_Op<"resize", [Pure],
    "return ::weft::graph::resizeCost(shapes, getMode(), getAntialias());"> {
  let summary = "resample a tensor by nearest, linear or cubic interpolation";
  let description = [{
    ONNX Resize with scales (or sizes, imported as the scales they imply):
    dimension d of the result has extent ⌊extent_d · `scales[d]`⌋, and each
    result coordinate x is mapped to an input coordinate by
    `coordinate_transformation_mode` (`half_pixel`, `half_pixel_symmetric`,
    `pytorch_half_pixel`, `align_corners` or `asymmetric`, as ONNX defines
    them). The value there is interpolated dimension by dimension from the
    neighbouring input elements (indices outside the input are clamped to
    its edge) by `mode`:

    - `nearest`: the neighbour chosen by `nearest_mode`
      (`round_prefer_floor`, `round_prefer_ceil`, `floor`, `ceil`);
    - `linear`: the two neighbours, weighted by distance (bilinear and
      trilinear over several dimensions);
    - `cubic`: four neighbours with Keys' cubic kernel of parameter
      `cubic_coeff_a`; `exclude_outside` drops neighbours outside the input
      and renormalises the weights.

    With `antialias` (linear and cubic), a dimension that shrinks widens the
    kernel by 1 / scale, so that the result is low-pass filtered. A
    dimension whose scale is 1 and whose extent is unchanged is copied; only
    those dimensions can be split across devices. The op is linear in its
    input: its backward adds each result gradient into the input elements
    the interpolation read, with the same weights.

    An ONNX model may give the scales as a value computed at run time (a
    graph input) while its shapes are static. The optional operand
    `runtime_scales` (one element per dim) then holds them: the
    interpolation reads its values when it runs (they must give the
    result's extents), and the `scales` attribute holds result extent /
    input extent for the shapes, the cost model and the sharding rules. It
    has no gradient.

    Example:

    ```mlir
    %u = graph.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<32x64x16x16xf32>) -> tensor<32x64x32x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                   Optional<Graph_FloatTensor>:$runtime_scales, StrAttr:$mode,
                   StrAttr:$coordinate_transformation_mode,
                   DenseF64ArrayAttr:$scales,
                   DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode,
                   DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class Graph_PoolOp<string mnemonic, string math, string extra = "",
                   dag extraArgs = (ins)>
    : Graph_Op<mnemonic, [Pure],
               "return ::weft::graph::poolCost(shapes, getKernel());"> {
  let summary = "2-D or 3-D " # math # " pooling (NCHW, NCDHW)";
  let description = "Takes the " # math # [{ of each `kernel` window moved
    by `strides` over the zero/−∞-padded N×C×H×W or N×C×D×H×W input.
    `kernel`, `strides` and the optional `dilations` (default all 1) have
    one entry per spatial dim, `pads` two: the padding before each spatial
    dim, then after each ([top, left, bottom, right] in 2-d). Dilations
    space the window's elements: a window covers dilation·(kernel − 1) + 1
    input positions. ONNX's 1-d pools are imported as 2-d ones with a unit
    height, and `ceil_mode` as extra padding at the end (docs/Import.md).}] # extra # [{

    Example:

    ```mlir
    %p = graph.}] # mnemonic # [{ %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<32x64x32x32xf32> -> tensor<32x64x16x16xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input,
                            DenseI64ArrayAttr:$kernel,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                            OptionalAttr<DenseI64ArrayAttr>:$dilations),
                       extraArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_MaxPoolOp : Graph_PoolOp<"max_pool", "maximum">;
def Graph_AvgPoolOp : Graph_PoolOp<"avg_pool", "average", [{ The sum
    is divided by the kernel's size (padding counts, ONNX's
    `count_include_pad=1`) unless `exclude_pad` is set; then by the number
    of input positions in the window (ONNX's default, `count_include_pad=0`).}],
    (ins UnitAttr:$exclude_pad)>;

def Graph_GlobalAvgPoolOp : Graph_Op<"global_avg_pool", [Pure],
    "return ::weft::graph::reduceCost(shapes);"> {
  let summary = "average over all spatial positions";
  let description = [{
    N×C×H×W → N×C×1×1 by averaging over H and W.

    Example:

    ```mlir
    %g = graph.global_avg_pool %x : tensor<32x512x4x4xf32> -> tensor<32x512x1x1xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Regularisation, losses, mixture of experts
//===----------------------------------------------------------------------===//

def Graph_DropoutOp : Graph_Op<"dropout", [SameOperandsAndResultType],
    "return ::weft::graph::dropoutCost(shapes);"> {
  let summary = "training-mode dropout";
  let description = [{
    Zeroes each element with probability `ratio` and scales the rest by
    1 / (1 − ratio). The mask is keyed by the element's global index, so a
    distributed run draws the same mask as one device. Eval-mode dropout is
    the identity and is removed by the importer. Not `Pure`: two dropouts of
    the same value draw different masks.

    Example:

    ```mlir
    %d = graph.dropout %x {ratio = 1.0e-1 : f64} : tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$ratio);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Graph_LossOp<string mnemonic, string what, string cost>
    : Graph_Op<mnemonic, [Pure], cost> {
  let description = "The " # what # [{ of N×C `input` (class dimension 1,
    optional trailing dimensions as in ONNX) against integer `labels` of
    shape N×…, reduced by `reduction` (`mean` or `sum`) to a scalar. Labels
    equal to `ignore_index`, when given, contribute nothing (and do not count
    in the mean).

    Example:

    ```mlir
    %l = graph.}] # mnemonic # [{ %logits, %labels {reduction = "mean"} : (tensor<4096x30522xf32>, tensor<4096xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IndexTensor:$labels,
                   StrAttr:$reduction, OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_CrossEntropyOp : Graph_LossOp<"cross_entropy",
    "softmax cross-entropy of the logits",
    "return ::weft::graph::softmaxCost(shapes);"> {
  let summary = "softmax cross-entropy loss";
}

def Graph_NllLossOp : Graph_LossOp<"nll_loss",
    "negative log-likelihood of the log-probabilities",
    "return ::weft::graph::gatherCost(shapes);"> {
  let summary = "negative log-likelihood loss";
}

def Graph_Top2GatingOp : Graph_Op<"top2_gating", [Pure],
    "return ::weft::graph::top2GatingCost(shapes);"> {
  let summary = "GShard top-2 gating with per-group capacity";
  let description = [{
    For G groups of S tokens with hidden size H (`tokens`: G×S×H) and a gate
    weight H×E, computes the softmax gate over E experts, picks each token's
    two best experts, and assigns it a slot among each expert's C slots
    (capacity, counted per group; tokens over capacity are dropped). Returns
    the 0/1 `dispatch` tensor and the gate-weighted `combine` tensor, both
    G×S×E×C. Because capacity is local to a group, splitting the group
    dimension needs no communication. Imported from the custom ONNX op
    `weft.Top2Gating`.

    Example:

    ```mlir
    %d, %c = graph.top2_gating %x, %wg : (tensor<32x128x768xf32>, tensor<768x16xf32>) -> (tensor<32x128x16x40xf32>, tensor<32x128x16x40xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$tokens, Graph_FloatTensor:$gate);
  let results = (outs Graph_FloatTensor:$dispatch, Graph_FloatTensor:$combine);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // WEFT_GRAPH_OPS
