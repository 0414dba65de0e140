// spmd-synthesize turns the graph program into a verified spmd plan for the
// cluster, and the plan computes the model (weft-run compares loss and every
// gradient on the plan's virtual devices).
// RUN: weft-opt --spmd-synthesize="cluster=%S/Inputs/tiny-cluster.yaml report=true" %S/Inputs/mlp-graph.mlir -o %t.plan.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.plan.mlir
// RUN: weft-run %S/Inputs/mlp-graph.mlir --plan %t.plan.mlir | FileCheck %s --check-prefix=EXEC
// Deterministic: a second run writes the same plan.
// RUN: weft-opt --spmd-synthesize="cluster=%S/Inputs/tiny-cluster.yaml" %S/Inputs/mlp-graph.mlir -o %t.again.mlir
// RUN: diff %t.plan.mlir %t.again.mlir
// Bad options are one-line errors.
// RUN: %expect-exit 1 weft-opt --spmd-synthesize %S/Inputs/mlp-graph.mlir 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: %expect-exit 1 weft-opt --spmd-synthesize="cluster=%S/Inputs/tiny-cluster.yaml heuristic=best" %S/Inputs/mlp-graph.mlir 2>&1 | FileCheck %s --check-prefix=HEURISTIC

// REMARK: remark: synthesised: {{[0-9]+}} expansions, gap {{.*}}; search step time {{.*}} s, evaluated {{.*}} s (estimates)

// CHECK: module attributes {spmd.fingerprint = "sha256:{{[0-9a-f]+}}", spmd.mesh = #spmd.mesh<
// CHECK-SAME: spmd.segments = [
// CHECK: func.func @main(
// CHECK-COUNT-4: spmd.parameter
// CHECK: spmd.local
// CHECK-SAME: variant = "matmul.
// CHECK: graph.cross_entropy
// CHECK-NOT: graph.matmul
// CHECK: return

// EXEC: spmd loss:
// EXEC: verdict:     the plan computes the model

// NOCLUSTER: error: spmd-synthesize: the pass needs the cluster: cluster=<path to spec yaml>
// HEURISTIC: error: spmd-synthesize: unknown heuristic 'best' (expected admissible or zero)
