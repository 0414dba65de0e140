//===- Passes.td - spmd dialect passes -----------------------*- tablegen -*-===//

#ifndef WEFT_SPMD_PASSES
#define WEFT_SPMD_PASSES

include "mlir/Pass/PassBase.td"

// Every pass prices the plan on a cluster: `cluster` is the path of a cluster
// spec YAML (docs/ClusterSpec.md). The mesh attribute alone lacks link
// bandwidths and memory bandwidth (docs/Ratios.md).
defvar ClusterOptions = [
  Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
         "path of the cluster spec YAML the plan runs on (required)">,
  Option<"dtype", "dtype", "std::string", /*default=*/"\"fp32\"",
         "compute dtype the plan is priced in (fp32 | bf16 | fp16)">,
  Option<"report", "report", "bool", /*default=*/"false",
         "emit a remark with what the pass did and the evaluator's step time "
         "before and after (estimates)">
];

def AssignRatios : Pass<"spmd-assign-ratios", "::mlir::ModuleOp"> {
  let summary = "choose segment ratios with the ratio LP (GLPK)";
  let description = [{
    Builds the ratio problem of the plan at its current collective variants
    (one ratio per segment group split on the node axis and device class;
    every step priced as the evaluator prices it, constants kept, identical
    steps collapsed, memory rows per class) and writes the LP's ratios into
    the segments (docs/Design.md §5, docs/Ratios.md). Segments whose ratios change
    lose their integer sizes (run spmd-integerize next). Idempotent: ratios
    the LP does not strictly improve are left as they are.
  }];
  let options = ClusterOptions;
}

def SelectCollectives : Pass<"spmd-select-collectives", "::mlir::ModuleOp"> {
  let summary = "choose each collective's variant at the current ratios";
  let description = [{
    For every `spmd.all_gather` (`mode` padded | grouped) and
    `spmd.all_reduce` (`algorithm` ring | hierarchical | tree), keeps the variant
    whose forward + dual time (max over devices, as the evaluator prices it)
    is smaller at the plan's current ratios. The choice is separable per
    collective (docs/Design.md §4); ties keep the current variant.
  }];
  let options = ClusterOptions;
}

def Integerize : Pass<"spmd-integerize", "::mlir::ModuleOp"> {
  let summary = "integer shard sizes for the current ratios (Z3)";
  let description = [{
    Integer sizes per device for every segment group the LP moves: multiples
    of the segment alignment (and of `align` where it divides the extent),
    summing to the extent, devices of one class within one unit, minimising
    the LP's objective (docs/Ratios.md). Every constraint is checked with Z3
    before the sizes are written. With `report`, a remark gives the
    continuous and the integer cost and the evaluator's step time.
  }];
  let options = !listconcat(ClusterOptions, [
    Option<"align", "align", "int64_t", /*default=*/"1",
           "shard sizes are also multiples of N where N divides the extent">
  ]);
}

def Synthesize : Pass<"spmd-synthesize", "::mlir::ModuleOp"> {
  let summary = "synthesise an spmd plan for a graph program (A* + ratio LP)";
  let description = [{
    Replaces a `graph` program (`func.func @main` of graph ops, as the
    importer writes it) with the `spmd` plan `weft::synthesize` finds for it
    on `cluster` (docs/Design.md §4, docs/Synthesis.md): A* over the distributed
    instruction set at fixed ratios, alternated with the ratio LP and the
    per-collective variant choice while the cost strictly improves, then
    integer shard sizes (Z3). The module keeps no graph-level ops outside
    `spmd.local` regions; its attributes carry the mesh, the segments and the
    model's fingerprint. With `baselines` (the default) the plan written is
    chosen as `weftc -o` chooses it (weft/Synth/PlanChoice.h): DP-EV, DP-CP
    and TP-DP are built from the same program and a baseline that fits and
    is faster than the search's plan (both evaluated with gradient-sync
    overlap) replaces it. With `report`, a remark gives the search
    statistics, the step time (estimates) and which plan was kept.
  }];
  let options = !listconcat(ClusterOptions, [
    Option<"baselines", "baselines", "bool", /*default=*/"true",
           "keep a baseline that fits and beats the search's plan">,
    Option<"heuristic", "heuristic", "std::string", /*default=*/"\"admissible\"",
           "A* heuristic: admissible | zero">,
    Option<"memo", "memo", "bool", /*default=*/"true",
           "memoise repeated blocks">,
    Option<"fixedRatios", "fixed-ratios", "bool", /*default=*/"false",
           "keep ratios proportional to device speed (no LP alternation)">,
    Option<"maxExpansions", "max-expansions", "uint64_t", /*default=*/"0",
           "stop the search after N expansions (0: the default budget)">,
    Option<"align", "align", "int64_t", /*default=*/"1",
           "integer shard sizes are multiples of N">
  ]);
}

def DumpPlan : Pass<"spmd-dump", "::mlir::ModuleOp"> {
  let summary = "write the module to a file (between pipeline stages)";
  let description = [{
    Prints the module, unchanged, to `dir`/`name`.mlir; the synthesis
    pipeline (`spmd-synthesis-pipeline` with `dump-dir`) runs it after every
    stage. An empty `dir` does nothing.
  }];
  let options = [
    Option<"dir", "dir", "std::string", /*default=*/"\"\"",
           "directory to write to (created if missing)">,
    Option<"name", "name", "std::string", /*default=*/"\"module\"",
           "file name without the .mlir suffix">
  ];
}

#endif // WEFT_SPMD_PASSES
