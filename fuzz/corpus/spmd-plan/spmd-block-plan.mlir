// spmd-block.mlir on 2 nodes x 2 devices (V100 node, P100 node): the
// vocabulary split over all 4 devices (device 3 holds none of it), layer
// norm and softmax over a hidden dim split unevenly on the local axis,
// batch split over nodes, reshape of a split batch, matmul split by rows and
// columns (a column shard of size 1), cross-entropy split by batch and
// classes, a ZeRO-1 bias.
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 7, ratios = [0.25, 0.25], sizes = [3, 2, 2, 0]>,
    #spmd.segment<id = 1, extent = 4, ratios = [0.25, 0.25], sizes = [1, 1, 2, 0]>,
    #spmd.segment<id = 2, extent = 5, ratios = [0.25, 0.25], sizes = [2, 1, 1, 1]>,
    #spmd.segment<id = 3, extent = 6, ratios = [0.25, 0.25], sizes = [3, 1, 2, 0]>,
    #spmd.segment<id = 4, extent = 15, ratios = [0.25, 0.25], sizes = [5, 4, 3, 3]>],
  spmd.version = 2 : i64} {
  func.func @main(%ids: tensor<5x3xi64> {spmd.dist = #spmd.dist<[id, id]>},
                  %y: tensor<15xi64> {spmd.dist = #spmd.dist<[gather(0, 4), id]>}) -> tensor<f32> {
    %e = spmd.parameter "embed" {strategy = #spmd.strategy<replicated>} : tensor<7x4xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    %g = spmd.parameter "ln.weight" {strategy = #spmd.strategy<replicated>} : tensor<4xf32> -> #spmd.dist<[id, gather(0, 1)]>
    %b = spmd.parameter "ln.bias" {strategy = #spmd.strategy<zero1>} : tensor<4xf32> -> #spmd.dist<[id, gather(0, 1)]>
    %w = spmd.parameter "proj" {strategy = #spmd.strategy<replicated>} : tensor<4x6xf32> -> #spmd.dist<[id, gather(1, 3)]>
    %x0 = spmd.local(%e, %ids) {variant = "gather.split-vocab, gather.split-vocab", dists = [#spmd.dist<[sum, sum]>], needs_offset} : (tensor<7x4xf32>, tensor<5x3xi64>) -> tensor<5x3x4xf32> {
    ^bb0(%a: tensor<7x4xf32>, %i: tensor<5x3xi64>):
      %v = graph.gather %a, %i {axis = 0 : i64} : (tensor<7x4xf32>, tensor<5x3xi64>) -> tensor<5x3x4xf32> loc("embedding")
      spmd.yield %v : tensor<5x3x4xf32>
    }
    %x1 = spmd.all_reduce %x0 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<5x3x4xf32> -> #spmd.dist<[sum, id]>
    %x2 = spmd.all_reduce %x1 {axis = 0 : i64, algorithm = #spmd.algorithm<hierarchical>} : tensor<5x3x4xf32> -> #spmd.dist<[id, id]>
    %x3 = spmd.shard %x2 {axis = 0 : i64} : tensor<5x3x4xf32> -> #spmd.dist<[gather(0, 2), id]>
    %x = spmd.shard %x3 {axis = 1 : i64} : tensor<5x3x4xf32> -> #spmd.dist<[gather(0, 2), gather(2, 1)]>
    %n = spmd.local(%x, %g, %b) {variant = "layer_norm.split, layer_norm.split-normalized", dists = [#spmd.dist<[gather(0, 2), gather(2, 1)]>]} : (tensor<5x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<5x3x4xf32> {
    ^bb0(%a: tensor<5x3x4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>):
      %v = graph.layer_norm %a, %c, %d {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<5x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<5x3x4xf32> loc("ln")
      spmd.yield %v : tensor<5x3x4xf32>
    }
    %s = spmd.local(%n) {variant = "softmax.split, softmax.split-reduced", dists = [#spmd.dist<[gather(0, 2), gather(2, 1)]>]} : (tensor<5x3x4xf32>) -> tensor<5x3x4xf32> {
    ^bb0(%a: tensor<5x3x4xf32>):
      %v = graph.softmax %a {axis = 2 : i64} : tensor<5x3x4xf32> loc("softmax")
      spmd.yield %v : tensor<5x3x4xf32>
    }
    %sg = spmd.all_gather %s {axis = 1 : i64, mode = #spmd.gather_mode<grouped>} : tensor<5x3x4xf32> -> #spmd.dist<[gather(0, 2), id]>
    %r = spmd.local(%sg) {variant = "reshape.split-group, reshape.replicate", dists = [#spmd.dist<[gather(0, 4), id]>]} : (tensor<5x3x4xf32>) -> tensor<15x4xf32> {
    ^bb0(%a: tensor<5x3x4xf32>):
      %v = graph.reshape %a : tensor<5x3x4xf32> -> tensor<15x4xf32> loc("flatten")
      spmd.yield %v : tensor<15x4xf32>
    }
    %h = spmd.local(%r, %w) {variant = "matmul.split-rows, matmul.split-cols", dists = [#spmd.dist<[gather(0, 4), gather(1, 3)]>]} : (tensor<15x4xf32>, tensor<4x6xf32>) -> tensor<15x6xf32> {
    ^bb0(%a: tensor<15x4xf32>, %c: tensor<4x6xf32>):
      %v = graph.matmul %a, %c : (tensor<15x4xf32>, tensor<4x6xf32>) -> tensor<15x6xf32> loc("proj")
      spmd.yield %v : tensor<15x6xf32>
    }
    %l0 = spmd.local(%h, %y) {variant = "cross_entropy.split-batch, cross_entropy.split-classes", dists = [#spmd.dist<[sum, sum]>], needs_offset} : (tensor<15x6xf32>, tensor<15xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<15x6xf32>, %c: tensor<15xi64>):
      %v = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<15x6xf32>, tensor<15xi64>) -> tensor<f32> loc("loss")
      spmd.yield %v : tensor<f32>
    }
    %l1 = spmd.all_reduce %l0 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[sum, id]>
    %l = spmd.all_reduce %l1 {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}
