//===- SpmdOps.td - The spmd dialect's operations -----------*- tablegen -*-===//

#ifndef WEFT_SPMD_OPS
#define WEFT_SPMD_OPS

include "Spmd/IR/SpmdAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Spmd_Op<string mnemonic, list<Trait> traits = []>
    : Op<Spmd_Dialect, mnemonic, traits>;

def Spmd_AnyTensor : RankedTensorOf<[AnyFloat, AnyInteger]>;

//===----------------------------------------------------------------------===//
// Model tensors
//===----------------------------------------------------------------------===//

def Spmd_ParameterOp : Spmd_Op<"parameter", [Pure]> {
  let summary = "a model tensor with its storage layout and update strategy";
  let description = [{
    Declares the parameter (or buffer) `name` of the model, stored with
    distribution `dist`. `strategy` says how it is stored and updated
    (docs/Design.md §3.4):

    - `replicated`: whole copies (on the `id` axes); the gradient is
      all-reduced over those axes. With `gather` entries in `dist` the
      parameter is also used sharded (tensor parallelism).
    - `zero1`, `zero2`: used whole; the optimizer state (and for `zero2` the
      gradient) is sharded: reduce-scatter of the gradient, all-gather of
      the updated shard.
    - `zero3`: stored sharded (`dist` has `gather` entries); gathered before
      use in the forward pass and again in the backward pass.
    - `buffer`: not trainable (running statistics, masks): no gradient.

    Constraints: `dist` has no partial (`sum`/`max`) entry; `zero3` needs a
    split; `zero1`/`zero2` need at least one whole (`id`) axis to shard the
    state over.

    Example:

    ```mlir
    %w = spmd.parameter "fc1.weight" {strategy = #spmd.strategy<zero3>} : tensor<784x128xf32> -> #spmd.dist<[gather(0, 1), id]>
    ```
  }];
  let arguments = (ins StrAttr:$name, Spmd_ParamStrategyAttr:$strategy,
                       Spmd_DistAttr:$dist);
  let results = (outs Spmd_AnyTensor:$result);
  let assemblyFormat =
      "$name attr-dict `:` type($result) `->` qualified($dist)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layout changes and collectives
//===----------------------------------------------------------------------===//

class Spmd_RelayoutOp<string mnemonic, string from, string to,
                      list<Trait> traits = []>
    : Spmd_Op<mnemonic, !listconcat(traits,
                                    [AllTypesMatch<["input", "result"]>])> {
  let arguments = (ins Spmd_AnyTensor:$input, I64Attr:$axis,
                       Spmd_DistAttr:$dist);
  let results = (outs Spmd_AnyTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` qualified($dist)";
  let hasVerifier = 1;
  code baseDescription = [{
    Changes entry `axis` of the input's distribution from }] # from #
    [{ to }] # to # [{; `dist` is the result's distribution, equal
    to the input's on every other axis. The value's global type does not
    change.
  }];
}

def Spmd_ShardOp : Spmd_RelayoutOp<"shard", "`id`", "`gather(d, s)`", [Pure]> {
  let summary = "split a whole value (free)";
  let description = baseDescription # [{
    Every device already holds the whole value and keeps its own shard: no
    communication. Its dual zero-pads the shard's gradient.

    Example:

    ```mlir
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(0, 0), id]>
    ```
  }];
}

def Spmd_AllGatherOp : Spmd_RelayoutOp<"all_gather", "`gather(d, s)`", "`id`"> {
  let summary = "collect the shards of a split value on every device";
  let description = baseDescription # [{
    `mode` says how uneven shards travel: `padded` (every shard padded to the
    largest, one collective) or `grouped` (one broadcast per shard, no
    padding). Its dual is a reduce-scatter.

    Example:

    ```mlir
    %g = spmd.all_gather %s {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<32x784xf32> -> #spmd.dist<[id, id]>
    ```
  }];
  let arguments = (ins Spmd_AnyTensor:$input, I64Attr:$axis,
                       Spmd_DistAttr:$dist,
                       DefaultValuedAttr<Spmd_GatherModeAttr,
                           "::weft::spmd::GatherMode::Padded">:$mode);
}

def Spmd_ReduceScatterOp
    : Spmd_RelayoutOp<"reduce_scatter", "`sum`", "`gather(d, s)`"> {
  let summary = "add up partial sums, each device keeping its shard";
  let description = baseDescription # [{
    Its dual is an all-gather.

    Example:

    ```mlir
    %r = spmd.reduce_scatter %p {axis = 1 : i64} : tensor<32x768xf32> -> #spmd.dist<[id, gather(1, 2)]>
    ```
  }];
}

def Spmd_AllReduceOp : Spmd_RelayoutOp<"all_reduce", "`sum` or `max`", "`id`"> {
  let summary = "combine partial values on every device";
  let description = baseDescription # [{
    `algorithm` is `ring` (one ring over all devices of the axis),
    `hierarchical` (inside nodes, then across) or `tree` (binary trees
    across nodes, latency growing with log2 of the node count). A `max` all-reduce is only a
    softmax's stability shift and has no dual (stop-gradient); a `sum`
    all-reduce's dual is a `sum` all-reduce.

    Example:

    ```mlir
    %r = spmd.all_reduce %p {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    ```
  }];
  let arguments = (ins Spmd_AnyTensor:$input, I64Attr:$axis,
                       Spmd_DistAttr:$dist,
                       DefaultValuedAttr<Spmd_AllReduceAlgorithmAttr,
                           "::weft::spmd::AllReduceAlgorithm::Ring">:$algorithm);
}

def Spmd_AllToAllOp
    : Spmd_RelayoutOp<"all_to_all", "`gather(i, s)`", "`gather(j, t)`, j ≠ i"> {
  let summary = "re-split a split value along another dim";
  let description = baseDescription # [{
    Every device sends each other device the part of its shard that the
    other owns under the new split (shares may be uneven on both sides).
    Its dual is the all-to-all back.

    Example:

    ```mlir
    %t = spmd.all_to_all %x {axis = 0 : i64} : tensor<16x64x8xf32> -> #spmd.dist<[gather(2, 3), id]>
    ```
  }];
}

def Spmd_SendOp : Spmd_Op<"send"> {
  let summary = "send a value to the next pipeline stage";
  let description = [{
    Sends `input`, laid out as it is, to the devices of stage `peer`. The
    receiving stage reads it with `spmd.recv`. In the backward pass the
    gradient travels back (recv → send). In a pipelined plan
    (docs/Pipeline.md) `peer` is the next stage, the k-th send of a stage
    is read by the k-th recv of the next, and `input` is not partial.

    Example:

    ```mlir
    spmd.send %h {peer = 1 : i64} : tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Spmd_AnyTensor:$input, I64Attr:$peer);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Spmd_RecvOp : Spmd_Op<"recv"> {
  let summary = "receive a value from the previous pipeline stage";
  let description = [{
    Receives the value sent by stage `peer`, with distribution `dist` on
    this stage's mesh: the value is resharded from the sender's layout on
    its sub-mesh to `dist` on this stage's. In a pipelined plan `peer` is
    the previous stage and `dist` is not partial.

    Example:

    ```mlir
    %h = spmd.recv {peer = 0 : i64} : tensor<32x128x768xf32> -> #spmd.dist<[gather(0, 0), id]>
    ```
  }];
  let arguments = (ins I64Attr:$peer, Spmd_DistAttr:$dist);
  let results = (outs Spmd_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result) `->` qualified($dist)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Spmd_LocalOp : Spmd_Op<"local", [IsolatedFromAbove, SingleBlock]> {
  let summary = "the per-device recipe of one compute variant";
  let description = [{
    Runs its region on every device, on the device's shards of `inputs`; the
    region's block arguments stand for those shards and its `spmd.yield`
    gives the results' shards. Types inside are the global types (shard
    extents are derived from distributions and segment sizes, never stored).
    `variant` names the sharding rule (docs/ShardingRules.md) the recipe
    implements; `dists` gives each result's distribution. A recipe may need
    the shard's global offset (`needs_offset`), e.g. a vocabulary-split
    embedding or dropout keyed by global index.

    `recompute` (activation recomputation, docs/Synthesis.md
    "Recomputation") keeps none of the recipe's saved tensors across the
    forward pass: the backward pass runs the recipe's forward again first
    (its compute and its recipe's forward all-reduces are charged twice).
    Consecutive recomputing locals form a run that is recomputed together
    (a local without a gradient leaves the run open, any other closes it),
    so only inputs from outside the run (not a parameter or program input,
    and not a result of a recomputing local of the same run) are kept, and
    the run's saved tensors are live together during its backward. It has
    no effect on values, and none without a gradient.

    Example: data-parallel matmul on batch-split rows.

    ```mlir
    %y = spmd.local (%x, %w) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32> {
    ^bb0(%a: tensor<32x784xf32>, %b: tensor<784x10xf32>):
      %m = graph.matmul %a, %b : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
      spmd.yield %m : tensor<32x10xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Spmd_AnyTensor>:$inputs, StrAttr:$variant,
                       TypedArrayAttrBase<Spmd_DistAttr,
                           "one distribution per result">:$dists,
                       UnitAttr:$needs_offset, UnitAttr:$recompute);
  let results = (outs Variadic<Spmd_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "`(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
}

def Spmd_YieldOp : Spmd_Op<"yield", [Pure, Terminator, HasParent<"LocalOp">]> {
  let summary = "the results of a local recipe";
  let description = [{
    Ends an `spmd.local` region with the values of its results, one per
    result, of the same types.

    Example:

    ```mlir
    spmd.yield %m : tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Variadic<Spmd_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // WEFT_SPMD_OPS
