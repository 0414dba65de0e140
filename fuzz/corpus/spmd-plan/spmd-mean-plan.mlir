// spmd-mean.mlir on 3 single-device nodes (two V100, one P100): the
// contraction split with the P100 holding none of it, the bias (ZeRO-3,
// gathered before use) added once, a replicated dropout, each device taking
// its part of a strided slice window, a mean over a split dim divided by the
// global count; the weight is stored whole and sharded in the program.
module attributes {
  spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [2]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 8, ratios = [0.5, 0.0], sizes = [4, 4, 0]>,
    #spmd.segment<id = 1, extent = 10, ratios = [0.4, 0.2], sizes = [5, 3, 2]>,
    #spmd.segment<id = 2, extent = 4, ratios = [0.25, 0.5], sizes = [1, 2, 1]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<6x8xf32> {spmd.dist = #spmd.dist<[gather(1, 0), id]>}) -> tensor<f32> {
    %w0 = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<8x10xf32> -> #spmd.dist<[id, id]>
    %w = spmd.shard %w0 {axis = 0 : i64} : tensor<8x10xf32> -> #spmd.dist<[gather(0, 0), id]>
    %b0 = spmd.parameter "b" {strategy = #spmd.strategy<zero3>} : tensor<10xf32> -> #spmd.dist<[gather(0, 1), id]>
    %b = spmd.all_gather %b0 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<10xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local(%x, %w) {variant = "matmul.split-contraction, matmul.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<6x8xf32>, tensor<8x10xf32>) -> tensor<6x10xf32> {
    ^bb0(%a: tensor<6x8xf32>, %c: tensor<8x10xf32>):
      %v = graph.matmul %a, %c : (tensor<6x8xf32>, tensor<8x10xf32>) -> tensor<6x10xf32> loc("fc")
      spmd.yield %v : tensor<6x10xf32>
    }
    %hb = spmd.local(%h, %b) {variant = "add.partial-once, add.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32> {
    ^bb0(%a: tensor<6x10xf32>, %c: tensor<10xf32>):
      %v = graph.add %a, %c : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32> loc("bias")
      spmd.yield %v : tensor<6x10xf32>
    }
    %hr = spmd.all_reduce %hb {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<6x10xf32> -> #spmd.dist<[id, id]>
    %d = spmd.local(%hr) {variant = "dropout.replicate, dropout.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<6x10xf32>) -> tensor<6x10xf32> {
    ^bb0(%a: tensor<6x10xf32>):
      %v = graph.dropout %a {ratio = 0.25 : f64} : tensor<6x10xf32> loc("dropout")
      spmd.yield %v : tensor<6x10xf32>
    }
    %s = spmd.local(%d) {variant = "slice.split-sliced, slice.replicate", dists = [#spmd.dist<[gather(1, 2), id]>], needs_offset} : (tensor<6x10xf32>) -> tensor<6x4xf32> {
    ^bb0(%a: tensor<6x10xf32>):
      %v = graph.slice %a {starts = array<i64: 0, 1>, limits = array<i64: 6, 9>, steps = array<i64: 1, 2>} : tensor<6x10xf32> -> tensor<6x4xf32> loc("slice")
      spmd.yield %v : tensor<6x4xf32>
    }
    %q = spmd.local(%s, %s) {variant = "mul.split, mul.replicate", dists = [#spmd.dist<[gather(1, 2), id]>]} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%a: tensor<6x4xf32>, %c: tensor<6x4xf32>):
      %v = graph.mul %a, %c : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> loc("square")
      spmd.yield %v : tensor<6x4xf32>
    }
    %m = spmd.local(%q) {variant = "reduce_mean.split-reduced, reduce_mean.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<6x4xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<6x4xf32>):
      %v = graph.reduce_mean %a {axes = array<i64: 0, 1>, keepdims = false} : tensor<6x4xf32> -> tensor<f32> loc("mean")
      spmd.yield %v : tensor<f32>
    }
    %l = spmd.all_reduce %m {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}
