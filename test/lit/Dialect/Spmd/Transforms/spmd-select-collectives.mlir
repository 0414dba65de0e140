// RUN: weft-opt --spmd-select-collectives="cluster=%S/Inputs/tiny-cluster.yaml" %s -o %t.1.mlir
// RUN: FileCheck %s < %t.1.mlir
// RUN: weft-opt --spmd-select-collectives="cluster=%S/Inputs/tiny-cluster.yaml" %t.1.mlir -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// TP-DP baseline of a 2-layer MLP on Inputs/tiny-cluster.yaml (mesh: 3 nodes
// of 1 x 2 devices; two mesh nodes share the V100 cluster node). The loss's
// all-reduce along the node axis spans 2 devices of one cluster node and 1 of
// the other: one ring over the NIC waits 50 us in every round; hierarchical
// and tree both take one 5 us hop inside the node and one 50 us hop across
// it each way, and the tree's 4 B bandwidth term is the smaller, so the tree
// is kept. The all-reduces inside a node (axes 1 and 2) are the same either
// way and keep their ring.

// CHECK: spmd.all_reduce %{{.*}} {axis = 2 : i64}
// CHECK: spmd.all_reduce %{{.*}} {axis = 1 : i64}
// CHECK: spmd.all_reduce %{{.*}} {algorithm = #spmd.algorithm<tree>, axis = 0 : i64}

module attributes {spmd.mesh = #spmd.mesh<local = [1, 2], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [2]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 96, ratios = [0.16666666666666666, 0.16666666666666666], sizes = [16, 16, 16, 16, 16, 16]>, #spmd.segment<id = 1, extent = 64, ratios = [0.16666666666666666, 0.16666666666666666], sizes = [11, 11, 11, 11, 10, 10]>], spmd.version = 2 : i64} {
  func.func @main(%arg0: tensor<96x64xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0), id]>}, %arg1: tensor<96xi64> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0), id]>}) -> tensor<f32> {
    %0 = spmd.parameter "layers.0.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x64xf32> -> #spmd.dist<[id, id, gather(1, 1)]>
    %1 = spmd.parameter "layers.0.bias" {strategy = #spmd.strategy<replicated>} : tensor<64xf32> -> #spmd.dist<[id, id, gather(0, 1)]>
    %2 = spmd.parameter "layers.1.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x10xf32> -> #spmd.dist<[id, id, gather(0, 1)]>
    %3 = spmd.parameter "layers.1.bias" {strategy = #spmd.strategy<replicated>} : tensor<10xf32> -> #spmd.dist<[id, id, id]>
    %4 = spmd.local(%arg0, %0) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0), gather(1, 1)]>], variant = "matmul.split"} : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x64xf32>):
      %13 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32>
      spmd.yield %13 : tensor<96x64xf32>
    }
    %5 = spmd.local(%4, %1) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0), gather(1, 1)]>], variant = "add.split"} : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64xf32>):
      %13 = graph.add %arg2, %arg3 : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32>
      spmd.yield %13 : tensor<96x64xf32>
    }
    %6 = spmd.local(%5) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0), gather(1, 1)]>], variant = "relu.split"} : (tensor<96x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>):
      %13 = graph.relu %arg2 : tensor<96x64xf32>
      spmd.yield %13 : tensor<96x64xf32>
    }
    %7 = spmd.local(%6, %2) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0), sum]>], variant = "matmul.split-contraction"} : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x10xf32>):
      %13 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32>
      spmd.yield %13 : tensor<96x10xf32>
    }
    %8 = spmd.all_reduce %7 {axis = 2 : i64} : tensor<96x10xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0), id]>
    %9 = spmd.local(%8, %3) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0), id]>], variant = "add.split"} : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<10xf32>):
      %13 = graph.add %arg2, %arg3 : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32>
      spmd.yield %13 : tensor<96x10xf32>
    }
    %10 = spmd.local(%9, %arg1) {dists = [#spmd.dist<[sum, sum, id]>], variant = "cross_entropy.split-contraction"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<96xi64>):
      %13 = graph.cross_entropy %arg2, %arg3 {reduction = "mean"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32>
      spmd.yield %13 : tensor<f32>
    }
    %11 = spmd.all_reduce %10 {axis = 1 : i64} : tensor<f32> -> #spmd.dist<[sum, id, id]>
    %12 = spmd.all_reduce %11 {axis = 0 : i64} : tensor<f32> -> #spmd.dist<[id, id, id]>
    return %12 : tensor<f32>
  }
}

