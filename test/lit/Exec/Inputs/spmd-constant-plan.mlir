module attributes {spmd.fingerprint = "sha256:138d427c08c1f3db9e61b92b631ff832753fb43f70251da49f0cf5af5402e3a1", spmd.mesh = #spmd.mesh<local = [2], classes = [#spmd.device_class<type = "A", peak_gflops = 1000, memory_mb = 1000, nodes = [0]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>], spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x2xf32> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>}, %y: tensor<4xi64> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>}) -> tensor<f32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<2x3xf32> -> #spmd.dist<[id, id]>
    %c = spmd.local () {variant = "constant.replicate, constant.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : () -> tensor<4x2xf32> {
      %v = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32> : tensor<4x2xf32>
      spmd.yield %v : tensor<4x2xf32>
    }
    %a = spmd.local (%x, %c) {variant = "add.replicate, add.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32> {
    ^bb0(%p: tensor<4x2xf32>, %q: tensor<4x2xf32>):
      %s = graph.add %p, %q : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
      spmd.yield %s : tensor<4x2xf32>
    }
    %m = spmd.local (%a, %w) {variant = "matmul.replicate, matmul.split-rows", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32> {
    ^bb0(%p: tensor<4x2xf32>, %q: tensor<2x3xf32>):
      %s = graph.matmul %p, %q : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      spmd.yield %s : tensor<4x3xf32>
    }
    %l = spmd.local (%m, %y) {variant = "cross_entropy.replicate, cross_entropy.split-batch", dists = [#spmd.dist<[id, sum]>]} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> {
    ^bb0(%p: tensor<4x3xf32>, %q: tensor<4xi64>):
      %s = graph.cross_entropy %p, %q {reduction = "mean"} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
      spmd.yield %s : tensor<f32>
    }
    %r = spmd.all_reduce %l {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %r : tensor<f32>
  }
}
