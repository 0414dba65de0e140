// RUN: weft-opt --spmd-integerize="cluster=%S/Inputs/tiny-cluster.yaml" %s | FileCheck %s
// RUN: weft-opt --spmd-integerize="cluster=%S/Inputs/tiny-cluster.yaml align=8" %s | FileCheck %s --check-prefix=ALIGN
// RUN: weft-opt --spmd-integerize="cluster=%S/Inputs/tiny-cluster.yaml report=true" --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// The output verifies and integerizing it again changes nothing.
// RUN: weft-opt --spmd-integerize="cluster=%S/Inputs/tiny-cluster.yaml" %s -o %t.1.mlir
// RUN: weft-opt --spmd-integerize="cluster=%S/Inputs/tiny-cluster.yaml" %t.1.mlir -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// The MLP plan after spmd-assign-ratios (ratios 0.2413... per V100 and
// 0.0173... per P100 of a batch of 96: 23.17 and 1.66 samples). Z3 picks
// integer sizes summing to 96, devices of one class within one sample, at the
// least cost; with align=8 every size is a multiple of 8.

// CHECK: spmd.segments = [#spmd.segment<id = 0, extent = 96, ratios = [{{.*}}], sizes = [23, 23, 23, 23, 2, 2]>]
// ALIGN: sizes = [24, 24, 24, 24, 0, 0]
// REPORT: remark: integer sizes: continuous cost {{[0-9.]+}}e-04 s, integer cost {{[0-9.]+}}e-04 s, proved optimal; evaluator step time {{[0-9.]+}}e-04 s (estimates)

module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [2]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 96, ratios = [0.24134808853118714, 0.017303822937625755]>], spmd.version = 2 : i64} {
  func.func @main(%arg0: tensor<96x64xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}, %arg1: tensor<96xi64> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}) -> tensor<f32> {
    %0 = spmd.parameter "layers.0.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x64xf32> -> #spmd.dist<[id, id]>
    %1 = spmd.parameter "layers.0.bias" {strategy = #spmd.strategy<replicated>} : tensor<64xf32> -> #spmd.dist<[id, id]>
    %2 = spmd.parameter "layers.1.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x10xf32> -> #spmd.dist<[id, id]>
    %3 = spmd.parameter "layers.1.bias" {strategy = #spmd.strategy<replicated>} : tensor<10xf32> -> #spmd.dist<[id, id]>
    %4 = spmd.local(%arg0, %0) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "matmul.split"} : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x64xf32>):
      %12 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %5 = spmd.local(%4, %1) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "add.split"} : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64xf32>):
      %12 = graph.add %arg2, %arg3 : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %6 = spmd.local(%5) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "relu.split"} : (tensor<96x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>):
      %12 = graph.relu %arg2 : tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %7 = spmd.local(%6, %2) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "matmul.split"} : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x10xf32>):
      %12 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32>
      spmd.yield %12 : tensor<96x10xf32>
    }
    %8 = spmd.local(%7, %3) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "add.split"} : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<10xf32>):
      %12 = graph.add %arg2, %arg3 : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32>
      spmd.yield %12 : tensor<96x10xf32>
    }
    %9 = spmd.local(%8, %arg1) {dists = [#spmd.dist<[sum, sum]>], variant = "cross_entropy.split-contraction"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<96xi64>):
      %12 = graph.cross_entropy %arg2, %arg3 {reduction = "mean"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32>
      spmd.yield %12 : tensor<f32>
    }
    %10 = spmd.all_reduce %9 {axis = 1 : i64} : tensor<f32> -> #spmd.dist<[sum, id]>
    %11 = spmd.all_reduce %10 {axis = 0 : i64} : tensor<f32> -> #spmd.dist<[id, id]>
    return %11 : tensor<f32>
  }
}

