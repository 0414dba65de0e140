// RUN: weft-opt %s | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// A 2-node mesh (one V100 node, one P100 node) with 2 devices per node.
// Segment 0 splits a batch of 32 with V100 devices holding 3/8 each and
// P100 devices 1/8 each: 3/8·2 + 1/8·2 = 1. Segment 1 splits 784.

// CHECK: module attributes
// CHECK-SAME: spmd.fingerprint = "sha256:0f0f"
// CHECK-SAME: spmd.mesh = #spmd.mesh<local = [2], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>
// CHECK-SAME: spmd.micro_batches = 4 : i64
// CHECK-SAME: spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.375, 0.125], sizes = [12, 12, 4, 4]>, #spmd.segment<id = 1, extent = 784, ratios = [0.375, 0.125]>, #spmd.segment<id = 2, extent = 64, ratios = [0.5, 0.0], sizes = [32, 32, 0, 0], align = 32>]
// CHECK-SAME: spmd.version = 2
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 32, ratios = [0.375, 0.125], sizes = [12, 12, 4, 4]>,
    #spmd.segment<id = 1, extent = 784, ratios = [0.375, 0.125]>,
    #spmd.segment<id = 2, extent = 64, ratios = [0.5, 0.0], sizes = [32, 32, 0, 0], align = 32>],
  spmd.fingerprint = "sha256:0f0f",
  spmd.micro_batches = 4 : i64,
  spmd.version = 2 : i64} {

  // CHECK-LABEL: func.func @data_parallel
  // CHECK-SAME: {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}
  func.func @data_parallel(%x: tensor<32x784xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>},
                           %y: tensor<32xi64> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}) -> tensor<f32> {
    // CHECK: %[[W:.*]] = spmd.parameter "fc.weight" {strategy = #spmd.strategy<replicated>} : tensor<784x10xf32> -> #spmd.dist<[id, id]>
    %w = spmd.parameter "fc.weight" {strategy = #spmd.strategy<replicated>} : tensor<784x10xf32> -> #spmd.dist<[id, id]>
    // CHECK: spmd.local(%{{.*}}, %[[W]]) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "matmul.split-lhs-rows"}
    // CHECK: graph.matmul
    // CHECK: spmd.yield
    %l = spmd.local (%x, %w) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>]} : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32> {
    ^bb0(%a: tensor<32x784xf32>, %b: tensor<784x10xf32>):
      %m = graph.matmul %a, %b : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
      spmd.yield %m : tensor<32x10xf32>
    }
    // The mean over the batch divides by the global batch: each device
    // holds a partial sum of the loss.
    %p = spmd.local (%l, %y) {variant = "cross_entropy.split-batch", dists = [#spmd.dist<[sum, sum]>]} : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<32x10xf32>, %b: tensor<32xi64>):
      %c = graph.cross_entropy %a, %b {reduction = "mean"} : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>
      spmd.yield %c : tensor<f32>
    }
    // CHECK: spmd.all_reduce %{{.*}} {algorithm = #spmd.algorithm<hierarchical>, axis = 1 : i64} : tensor<f32> -> #spmd.dist<[sum, id]>
    %r1 = spmd.all_reduce %p {axis = 1 : i64, algorithm = #spmd.algorithm<hierarchical>} : tensor<f32> -> #spmd.dist<[sum, id]>
    // CHECK: spmd.all_reduce %{{.*}} {axis = 0 : i64} : tensor<f32> -> #spmd.dist<[id, id]>
    %r0 = spmd.all_reduce %r1 {axis = 0 : i64} : tensor<f32> -> #spmd.dist<[id, id]>
    return %r0 : tensor<f32>
  }

  // CHECK-LABEL: func.func @collectives
  func.func @collectives(%x: tensor<32x784xf32>) {
    // CHECK: spmd.shard %{{.*}} {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(0, 0), id]>
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(0, 0), id]>
    // CHECK: spmd.all_to_all %{{.*}} {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(1, 1), id]>
    %t = spmd.all_to_all %s {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(1, 1), id]>
    // CHECK: spmd.all_gather %{{.*}} {axis = 0 : i64, mode = #spmd.gather_mode<grouped>} : tensor<32x784xf32> -> #spmd.dist<[id, id]>
    %g = spmd.all_gather %t {axis = 0 : i64, mode = #spmd.gather_mode<grouped>} : tensor<32x784xf32> -> #spmd.dist<[id, id]>
    // CHECK: spmd.all_gather %{{.*}} {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[id, id]>
    %g2 = spmd.all_gather %s {axis = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[id, id]>
    %p = spmd.local (%g) {variant = "partial", dists = [#spmd.dist<[id, sum]>]} : (tensor<32x784xf32>) -> tensor<32x784xf32> {
    ^bb0(%a: tensor<32x784xf32>):
      spmd.yield %a : tensor<32x784xf32>
    }
    // CHECK: spmd.reduce_scatter %{{.*}} {axis = 1 : i64} : tensor<32x784xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %rs = spmd.reduce_scatter %p {axis = 1 : i64} : tensor<32x784xf32> -> #spmd.dist<[id, gather(0, 0)]>
    // CHECK: spmd.send %{{.*}} {peer = 1 : i64} : tensor<32x784xf32>
    spmd.send %rs {peer = 1 : i64} : tensor<32x784xf32>
    // CHECK: spmd.recv {peer = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    %rv = spmd.recv {peer = 0 : i64} : tensor<32x784xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    return
  }

  // CHECK-LABEL: func.func @parameters
  func.func @parameters() {
    // CHECK: spmd.parameter "a" {strategy = #spmd.strategy<zero3>} : tensor<784x10xf32> -> #spmd.dist<[gather(0, 1), id]>
    %a = spmd.parameter "a" {strategy = #spmd.strategy<zero3>} : tensor<784x10xf32> -> #spmd.dist<[gather(0, 1), id]>
    // CHECK: spmd.parameter "b" {strategy = #spmd.strategy<zero1>}
    %b = spmd.parameter "b" {strategy = #spmd.strategy<zero1>} : tensor<10xf32> -> #spmd.dist<[id, id]>
    // CHECK: spmd.parameter "c" {strategy = #spmd.strategy<zero2>}
    %c = spmd.parameter "c" {strategy = #spmd.strategy<zero2>} : tensor<10xf32> -> #spmd.dist<[id, id]>
    // CHECK: spmd.parameter "heads" {strategy = #spmd.strategy<replicated>} : tensor<768x64xf32> -> #spmd.dist<[id, gather(1, 2)]>
    %h = spmd.parameter "heads" {strategy = #spmd.strategy<replicated>} : tensor<768x64xf32> -> #spmd.dist<[id, gather(1, 2)]>
    // CHECK: spmd.parameter "pos" {strategy = #spmd.strategy<buffer>} : tensor<128xi64> -> #spmd.dist<[id, id]>
    %p = spmd.parameter "pos" {strategy = #spmd.strategy<buffer>} : tensor<128xi64> -> #spmd.dist<[id, id]>
    return
  }
}
