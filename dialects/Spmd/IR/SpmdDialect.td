//===- SpmdDialect.td - The spmd dialect --------------------*- tablegen -*-===//

#ifndef WEFT_SPMD_DIALECT
#define WEFT_SPMD_DIALECT

include "mlir/IR/OpBase.td"

def Spmd_Dialect : Dialect {
  let name = "spmd";
  let cppNamespace = "::weft::spmd";
  let summary = "A distributed (SPMD) training program on a device mesh.";
  let description = [{
    An `spmd` program runs the same code on every device of a mesh. Values
    keep their **global** static types; how a value is laid out over the mesh
    is its *distribution* (`#spmd.dist`), one entry per mesh axis:
    `id` (every device holds the whole value along that axis),
    `gather(dim, segment)` (the value is split along `dim`, the shares given
    by `segment`), or `sum` / `max` (every device holds a partial value that
    must be combined).

    The module carries what makes a program hermetic: the mesh
    (`spmd.mesh`, devices grouped by node with their device classes), the
    segments (`spmd.segments`, one ratio per device class and, once
    integerized, an integer shard size per device), the fingerprint of the
    model the plan was made from (`spmd.fingerprint`) and the format version
    (`spmd.version`).

    `spmd.micro_batches = N : i64` (optional, default 1) asks for gradient
    accumulation: the program's types are those of one micro-batch, and a
    training step runs it N times on N equal slices of the global batch
    before one optimizer step. A parameter's gradient sync over the axes
    it is stored whole on (replicated, ZeRO-1; ZeRO-3 over any id axes
    left) runs once per step, after the last micro-batch; ZeRO-2
    reduce-scatters after every micro-batch, and ZeRO-3's gather and the
    reduce-scatter that is its dual run in every micro-batch. On a graph
    module the
    attribute says the graph is one micro-batch of a step; plans built from
    it keep it. It must be a positive i64 on a module.

    `spmd.gradient_bucket_bytes = B : i64` (optional) is the size of the
    buckets the gradient sync runs in: the replicated and ZeRO-3 gradient
    all-reduces of one group are flattened, in backward order, into buffers
    of at most B bytes, one all-reduce each; a larger gradient is cut into
    pieces of B bytes. 0 syncs one tensor at a time. Absent, the emitted
    program uses 25 MiB (PyTorch DDP's default). It must be a non-negative
    i64 on a module; like `spmd.micro_batches`, plans built from a graph
    module keep it.

    **Pipelined plans** (docs/Pipeline.md). `spmd.schedule = "1f1b"` or
    `"gpipe"` on the module makes it a pipelined plan: its body is one
    nested `builtin.module` per stage, in stage order, and nothing else;
    `spmd.micro_batches` is the pipeline's micro-batch count. A stage
    module carries `spmd.stage = i : i64` (its index, equal to its
    position), `spmd.nodes = array<i64: ...>` (the cluster nodes of its
    sub-mesh: position i of its node axis is cluster node `nodes[i]`), its
    own `spmd.mesh` (the cluster mesh restricted to those nodes: the same
    `local` factors and, per position, the device class of that node) and
    its own `spmd.segments` (over the stage's devices); its `@main` takes
    all the model's inputs, the last stage's returns the loss and the
    others' return nothing. The verifier checks that the stages' node sets
    are disjoint cluster nodes, that stage s sends only to s + 1 and
    receives only from s - 1, that the k-th send of stage s and the k-th
    recv of stage s + 1 carry the same global type and neither is partial,
    and that a parameter is declared in one stage only. `spmd.stage` and
    `spmd.nodes` belong on a stage module inside a pipelined plan.

    Compute happens in `spmd.local` regions holding a variant's per-device
    recipe in the `graph` dialect; data moves only through the collectives
    (`all_gather`, `reduce_scatter`, `all_reduce`, `all_to_all`) and
    `send`/`recv` between pipeline stages. `spmd.shard` (whole → split) is
    free. The backward pass is implicit and derived from duals (docs/Design.md
    §3.4).
  }];
  let useFoldAPI = kEmitFoldAdaptorFolder;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Module attribute names.
    static constexpr ::llvm::StringLiteral kMeshAttr = "spmd.mesh";
    static constexpr ::llvm::StringLiteral kSegmentsAttr = "spmd.segments";
    static constexpr ::llvm::StringLiteral kFingerprintAttr = "spmd.fingerprint";
    static constexpr ::llvm::StringLiteral kVersionAttr = "spmd.version";
    static constexpr ::llvm::StringLiteral kMicroBatchesAttr =
        "spmd.micro_batches";
    /// `module`'s `spmd.micro_batches`, 1 when absent.
    static int64_t getMicroBatches(::mlir::Operation *module);
    static constexpr ::llvm::StringLiteral kGradientBucketAttr =
        "spmd.gradient_bucket_bytes";
    /// `module`'s `spmd.gradient_bucket_bytes`, or `absent`.
    static int64_t getGradientBucketBytes(::mlir::Operation *module,
                                          int64_t absent);
    /// Pipelined plans (docs/Pipeline.md): the schedule on the plan module,
    /// the index and the cluster nodes on each stage module.
    static constexpr ::llvm::StringLiteral kScheduleAttr = "spmd.schedule";
    static constexpr ::llvm::StringLiteral kStageAttr = "spmd.stage";
    static constexpr ::llvm::StringLiteral kNodesAttr = "spmd.nodes";
    /// Function argument attribute holding the argument's distribution.
    static constexpr ::llvm::StringLiteral kDistAttr = "spmd.dist";
    /// Registers the attributes (their storage is defined in SpmdAttrs.cpp).
    void registerAttributes();
    /// The plan format version this build reads and writes (2: strategy,
    /// mode and algorithm are enum attributes).
    static constexpr int64_t kFormatVersion = 2;
  }];
}

#endif // WEFT_SPMD_DIALECT
