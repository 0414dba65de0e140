// spmd-gconv.mlir on one node of 2 devices: the groups split 2 | 1 (channel
// shards in multiples of C/g = 2), each device's conv with its group count.
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 6, ratios = [0.5], sizes = [4, 2], align = 2>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<2x6x5x5xf32> {spmd.dist = #spmd.dist<[id, gather(1, 0)]>}) -> tensor<f32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<6x2x3x3xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %c = spmd.local(%x, %w) {variant = "conv2d.replicate, conv2d.split-groups", dists = [#spmd.dist<[id, gather(1, 0)]>]} : (tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32> {
    ^bb0(%a0: tensor<2x6x5x5xf32>, %a1: tensor<6x2x3x3xf32>):
      %v = graph.conv2d %a0, %a1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32> loc("gconv")
      spmd.yield %v : tensor<2x6x3x3xf32>
    }
    %q = spmd.local(%c, %c) {variant = "mul.replicate, mul.split", dists = [#spmd.dist<[id, gather(1, 0)]>]} : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>) -> tensor<2x6x3x3xf32> {
    ^bb0(%a0: tensor<2x6x3x3xf32>, %a1: tensor<2x6x3x3xf32>):
      %v = graph.mul %a0, %a1 : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>) -> tensor<2x6x3x3xf32> loc("sq")
      spmd.yield %v : tensor<2x6x3x3xf32>
    }
    %m = spmd.local(%q) {variant = "reduce_mean.replicate, reduce_mean.split-reduced", dists = [#spmd.dist<[id, sum]>]} : (tensor<2x6x3x3xf32>) -> tensor<f32> {
    ^bb0(%a0: tensor<2x6x3x3xf32>):
      %v = graph.reduce_mean %a0 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<2x6x3x3xf32> -> tensor<f32> loc("mean")
      spmd.yield %v : tensor<f32>
    }
    %l = spmd.all_reduce %m {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}
