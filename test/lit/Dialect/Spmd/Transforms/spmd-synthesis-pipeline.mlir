// The synthesis stages as passes, the IR after each written to dump-dir: the
// graph program, the search's plan at ratios proportional to speed, the LP's
// ratios, the collective choice and the integer sizes; the final plan
// computes the model.
// RUN: rm -rf %t.dump
// RUN: weft-opt --spmd-synthesis-pipeline="cluster=%S/Inputs/tiny-cluster.yaml dump-dir=%t.dump" %S/Inputs/mlp-graph.mlir -o %t.plan.mlir
// RUN: ls %t.dump | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=GRAPH < %t.dump/01-graph.mlir
// RUN: FileCheck %s --check-prefix=SIZES < %t.dump/05-integerize.mlir
// RUN: diff %t.dump/05-integerize.mlir %t.plan.mlir
// RUN: weft-run %S/Inputs/mlp-graph.mlir --plan %t.plan.mlir | FileCheck %s --check-prefix=EXEC

// FILES: 01-graph.mlir
// FILES-NEXT: 02-search.mlir
// FILES-NEXT: 03-assign-ratios.mlir
// FILES-NEXT: 04-select-collectives.mlir
// FILES-NEXT: 05-integerize.mlir

// GRAPH-NOT: spmd.
// GRAPH: graph.matmul

// Every segment of the final plan has integer sizes.
// SIZES: spmd.segments = [
// SIZES-NOT: ratios = [{{[^]]*}}]>
// SIZES: func.func @main

// EXEC: verdict:     the plan computes the model
