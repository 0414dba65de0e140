//===- SpmdAttrs.td - Meshes, distributions, segments -------*- tablegen -*-===//

#ifndef WEFT_SPMD_ATTRS
#define WEFT_SPMD_ATTRS

include "Spmd/IR/SpmdDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"

class Spmd_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Spmd_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def Spmd_ParamStrategy : I32EnumAttr<"ParamStrategy",
    "how a parameter is stored and updated", [
      I32EnumAttrCase<"Replicated", 0, "replicated">,
      I32EnumAttrCase<"Zero1", 1, "zero1">,
      I32EnumAttrCase<"Zero2", 2, "zero2">,
      I32EnumAttrCase<"Zero3", 3, "zero3">,
      I32EnumAttrCase<"Buffer", 4, "buffer">]> {
  let cppNamespace = "::weft::spmd";
  let genSpecializedAttr = 0;
}

def Spmd_ParamStrategyAttr
    : EnumAttr<Spmd_Dialect, Spmd_ParamStrategy, "strategy"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "a parameter's storage and update strategy";
  let description = [{
    One of `replicated`, `zero1`, `zero2`, `zero3`, `buffer`
    (`spmd.parameter` says what each means; docs/Duals.md gives each one's
    gradient sync and memory).

    Example: `#spmd.strategy<zero3>`
  }];
}

def Spmd_GatherMode : I32EnumAttr<"GatherMode",
    "how uneven shards travel in an all-gather", [
      I32EnumAttrCase<"Padded", 0, "padded">,
      I32EnumAttrCase<"Grouped", 1, "grouped">]> {
  let cppNamespace = "::weft::spmd";
  let genSpecializedAttr = 0;
}

def Spmd_GatherModeAttr
    : EnumAttr<Spmd_Dialect, Spmd_GatherMode, "gather_mode"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "how an all-gather moves uneven shards";
  let description = [{
    `padded` (every shard padded to the largest, one collective) or
    `grouped` (one ring per group of equal shards); `spmd.all_gather` says
    when each is cheaper.

    Example: `#spmd.gather_mode<grouped>`
  }];
}

def Spmd_AllReduceAlgorithm : I32EnumAttr<"AllReduceAlgorithm",
    "the algorithm of an all-reduce", [
      I32EnumAttrCase<"Ring", 0, "ring">,
      I32EnumAttrCase<"Hierarchical", 1, "hierarchical">,
      I32EnumAttrCase<"Tree", 2, "tree">]> {
  let cppNamespace = "::weft::spmd";
  let genSpecializedAttr = 0;
}

def Spmd_AllReduceAlgorithmAttr
    : EnumAttr<Spmd_Dialect, Spmd_AllReduceAlgorithm, "algorithm"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "the algorithm of an all-reduce";
  let description = [{
    `ring` (one ring over all devices of the axis: 2(n − 1) latency
    steps), `hierarchical` (reduce inside nodes, all-reduce across them,
    broadcast back) or `tree` (NCCL's double binary tree: a chain inside
    each node, two complementary binary trees across nodes, each carrying
    half the buffer, reduced up and broadcast down: log2(nodes) latency
    steps each way, about the buffer through each NIC each way). The cost
    model prices each (docs/CostModel.md); on gloo (CPU) the emitted program
    runs gloo's own all-reduce for all three.

    Example: `#spmd.algorithm<tree>`
  }];
}

def Spmd_DeviceClassAttr : Spmd_Attr<"DeviceClass", "device_class"> {
  let summary = "a set of interchangeable devices";
  let description = [{
    Devices of one type in nodes of one shape and links (docs/Design.md §5): the
    ratio LP has one variable per (segment, device class). `type` names the
    catalog entry; `peak_gflops` is the peak of the plan's dtype in GFLOP/s,
    `memory_mb` the device memory in MB (10^6 bytes), `nodes` the nodes of
    the mesh whose devices belong to the class.

    Constraints: peak and memory positive; nodes non-empty, in range of the
    mesh and in exactly one class (checked by the mesh).

    Example:

    ```mlir
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>
    ```
  }];
  let parameters = (ins StringRefParameter<"device type name">:$type,
                        "int64_t":$peak_gflops, "int64_t":$memory_mb,
                        "::mlir::DenseI64ArrayAttr":$nodes);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Spmd_MeshAttr : Spmd_Attr<"Mesh", "mesh"> {
  let summary = "the device mesh a program runs on";
  let description = [{
    Devices grouped by node. Axis 0 is the `node` axis, one position per
    node: nodes may differ (device type), so splits along it are uneven and
    follow a segment's ratios. The remaining axes factor the `local` axis
    (devices inside a node, which are identical): `local = [2, 4]`
    gives 8 devices per node as 2 × 4 sub-axes (e.g. data parallel × tensor
    parallel of degree 4 inside a node); splits along them are even. Device
    d of node n at local position (i, j) has id n·8 + i·4 + j.

    `classes` lists the device classes; every node belongs to exactly one.

    Constraints: at least one node; local factors positive; each node in one
    class.

    Example:

    ```mlir
    #spmd.mesh<local = [2], classes = [
      #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
      #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>
    ```
  }];
  let parameters = (ins "::mlir::DenseI64ArrayAttr":$local,
                        "::mlir::ArrayAttr":$classes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of mesh axes: the node axis plus the local sub-axes.
    unsigned getNumAxes() const { return 1 + getLocal().size(); }
    int64_t getNumNodes() const;
    int64_t getDevicesPerNode() const;
    int64_t getNumDevices() const { return getNumNodes() * getDevicesPerNode(); }
    /// Size of mesh axis `axis`.
    int64_t getAxisSize(unsigned axis) const;
    /// The class of node `node`, or null if the mesh is malformed.
    DeviceClassAttr getClassOfNode(int64_t node) const;
    /// Index into `classes` of node `node` (-1 if none).
    int64_t getClassIndexOfNode(int64_t node) const;
  }];
}

// Ratios print with full precision (17 significant digits): the verifier
// checks their sum to 1e-9, which the default 7-digit printing would break
// on re-parse.
def Spmd_RatiosParameter
    : AttrParameter<"::mlir::DenseF64ArrayAttr", "ratios, printed exactly"> {
  let printer = "::weft::spmd::printRatios($_printer, $_self)";
  let parser = "::weft::spmd::parseRatios($_parser)";
}

def Spmd_SegmentAttr : Spmd_Attr<"Segment", "segment"> {
  let summary = "a class of tensor dims split with one ratio vector";
  let description = [{
    A segment ties together the (tensor, dim) pairs that must be split with
    the same shares (docs/Design.md §3.2). `extent` is the global size of those
    dims. `ratios` has one entry per device class of the mesh: the fraction
    of the extent each device of that class holds, counted once per device,
    so Σ_c ratios[c] · |devices of c| = 1 (± 1e-9). A node's share is the
    sum of its devices'. `sizes`, once integerized, gives each device's
    integer shard size (zero allowed); they sum to `extent`. `align`, when
    above 1, is the multiple every integer size must respect (reshape
    alignment, docs/Design.md §3.3).

    Example:

    ```mlir
    #spmd.segment<id = 0, extent = 96, ratios = [0.1875, 0.0625], sizes = [18, 18, 6, 6], align = 1>
    ```
  }];
  let parameters = (ins "int64_t":$id, "int64_t":$extent,
                        Spmd_RatiosParameter:$ratios,
                        OptionalParameter<"::mlir::DenseI64ArrayAttr">:$sizes,
                        DefaultValuedParameter<"int64_t", "1">:$align);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Spmd_DistAttr : Spmd_Attr<"Dist", "dist"> {
  let summary = "how a value is laid out over the mesh";
  let description = [{
    One entry per mesh axis: `id` (whole along this axis), `gather(d, s)`
    (split along tensor dim `d` with the shares of segment `s`), `sum` (a
    partial sum to be added up along this axis) or `max` (a partial maximum;
    only as the stability shift of a split softmax, docs/Design.md §3.4).

    Constraints (checked where the value is defined): as many entries as
    mesh axes; `d` within the value's rank; `s` a segment of the module
    whose extent equals dim `d`; two axes splitting the same dim use the
    same segment; partial values are floating point.

    Example: split the batch over nodes and over the devices of each node,
    and keep the second dim whole:

    ```mlir
    #spmd.dist<[gather(0, 0), gather(0, 0)]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::weft::spmd::AxisDist",
                                           "one entry per mesh axis">:$axes);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The same distribution with entry `axis` replaced.
    DistAttr with(unsigned axis, ::weft::spmd::AxisDist entry) const;
    /// A distribution of `numAxes` identity entries.
    static DistAttr replicated(::mlir::MLIRContext *ctx, unsigned numAxes);
    /// Whether any axis holds a partial value.
    bool isPartial() const;
  }];
}

#endif // WEFT_SPMD_ATTRS
