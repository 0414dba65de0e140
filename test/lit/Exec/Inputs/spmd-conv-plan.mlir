// spmd-conv.mlir on 2 nodes x 2 devices: batch split over nodes (3 | 2),
// input channels split on the local axis (conv partial sums, its bias added
// once), batch norm with statistics synchronised over the split batch,
// channels split for pooling (one device holds a single channel), the
// classifier split by contraction.
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 5, ratios = [0.3, 0.2], sizes = [2, 1, 1, 1]>,
    #spmd.segment<id = 1, extent = 4, ratios = [0.25, 0.25], sizes = [1, 2, 0, 1]>,
    #spmd.segment<id = 2, extent = 6, ratios = [0.25, 0.25], sizes = [4, 0, 1, 1]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<5x4x6x6xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(1, 1)]>},
                  %y: tensor<5xi64> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) -> tensor<f32> {
    %w = spmd.parameter "conv.weight" {strategy = #spmd.strategy<replicated>} : tensor<6x4x3x3xf32> -> #spmd.dist<[id, gather(1, 1)]>
    %b = spmd.parameter "conv.bias" {strategy = #spmd.strategy<zero2>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %s = spmd.parameter "bn.weight" {strategy = #spmd.strategy<replicated>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %t = spmd.parameter "bn.bias" {strategy = #spmd.strategy<replicated>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %rm = spmd.parameter "bn.running_mean" {strategy = #spmd.strategy<buffer>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %rv = spmd.parameter "bn.running_var" {strategy = #spmd.strategy<buffer>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %fw = spmd.parameter "fc.weight" {strategy = #spmd.strategy<replicated>} : tensor<6x3xf32> -> #spmd.dist<[id, gather(0, 2)]>
    %c0 = spmd.local(%x, %w, %b) {variant = "conv2d.split-batch, conv2d.split-in-channels", dists = [#spmd.dist<[gather(0, 0), sum]>]} : (tensor<5x4x6x6xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> {
    ^bb0(%a0: tensor<5x4x6x6xf32>, %a1: tensor<6x4x3x3xf32>, %a2: tensor<6xf32>):
      %v = graph.conv2d %a0, %a1, %a2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<5x4x6x6xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> loc("conv")
      spmd.yield %v : tensor<5x6x6x6xf32>
    }
    %c = spmd.all_reduce %c0 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<5x6x6x6xf32> -> #spmd.dist<[gather(0, 0), id]>
    %n = spmd.local(%c, %s, %t, %rm, %rv) {variant = "batch_norm.split-batch-sync-stats, batch_norm.replicate", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<5x6x6x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> {
    ^bb0(%a0: tensor<5x6x6x6xf32>, %a1: tensor<6xf32>, %a2: tensor<6xf32>, %a3: tensor<6xf32>, %a4: tensor<6xf32>):
      %v = graph.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<5x6x6x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> loc("bn")
      spmd.yield %v : tensor<5x6x6x6xf32>
    }
    %r = spmd.local(%n) {variant = "relu.split, relu.replicate", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<5x6x6x6xf32>) -> tensor<5x6x6x6xf32> {
    ^bb0(%a0: tensor<5x6x6x6xf32>):
      %v = graph.relu %a0 : tensor<5x6x6x6xf32> loc("relu")
      spmd.yield %v : tensor<5x6x6x6xf32>
    }
    %rs = spmd.shard %r {axis = 1 : i64} : tensor<5x6x6x6xf32> -> #spmd.dist<[gather(0, 0), gather(1, 2)]>
    %p = spmd.local(%rs) {variant = "max_pool.split-batch, max_pool.split-channels", dists = [#spmd.dist<[gather(0, 0), gather(1, 2)]>]} : (tensor<5x6x6x6xf32>) -> tensor<5x6x3x3xf32> {
    ^bb0(%a0: tensor<5x6x6x6xf32>):
      %v = graph.max_pool %a0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<5x6x6x6xf32> -> tensor<5x6x3x3xf32> loc("pool")
      spmd.yield %v : tensor<5x6x3x3xf32>
    }
    %g = spmd.local(%p) {variant = "global_avg_pool.split-batch, global_avg_pool.split-channels", dists = [#spmd.dist<[gather(0, 0), gather(1, 2)]>]} : (tensor<5x6x3x3xf32>) -> tensor<5x6x1x1xf32> {
    ^bb0(%a0: tensor<5x6x3x3xf32>):
      %v = graph.global_avg_pool %a0 : tensor<5x6x3x3xf32> -> tensor<5x6x1x1xf32> loc("gap")
      spmd.yield %v : tensor<5x6x1x1xf32>
    }
    %f = spmd.local(%g) {variant = "flatten.split-group, flatten.split-group", dists = [#spmd.dist<[gather(0, 0), gather(1, 2)]>]} : (tensor<5x6x1x1xf32>) -> tensor<5x6xf32> {
    ^bb0(%a0: tensor<5x6x1x1xf32>):
      %v = graph.flatten %a0 {axis = 1 : i64} : tensor<5x6x1x1xf32> -> tensor<5x6xf32> loc("flatten")
      spmd.yield %v : tensor<5x6xf32>
    }
    %h0 = spmd.local(%f, %fw) {variant = "matmul.split-rows, matmul.split-contraction", dists = [#spmd.dist<[gather(0, 0), sum]>]} : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32> {
    ^bb0(%a0: tensor<5x6xf32>, %a1: tensor<6x3xf32>):
      %v = graph.matmul %a0, %a1 : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32> loc("fc")
      spmd.yield %v : tensor<5x3xf32>
    }
    %h = spmd.all_reduce %h0 {axis = 1 : i64, algorithm = #spmd.algorithm<hierarchical>} : tensor<5x3xf32> -> #spmd.dist<[gather(0, 0), id]>
    %l0 = spmd.local(%h, %y) {variant = "cross_entropy.split-batch, cross_entropy.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32> {
    ^bb0(%a0: tensor<5x3xf32>, %a1: tensor<5xi64>):
      %v = graph.cross_entropy %a0, %a1 {reduction = "mean"} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32> loc("loss")
      spmd.yield %v : tensor<f32>
    }
    %l = spmd.all_reduce %l0 {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}
