// kink-relu.mlir on two devices, the contraction split 2|2 (partial sums
// all-reduced before the relu).
module attributes {
  spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<2x4xf32> {spmd.dist = #spmd.dist<[gather(1, 0), id]>}, %y: tensor<2xi64> {spmd.dist = #spmd.dist<[id, id]>}) -> tensor<f32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x2xf32> -> #spmd.dist<[gather(0, 0), id]>
    %h = spmd.local(%x, %w) {variant = "matmul.split-contraction, matmul.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x4xf32>, %c: tensor<4x2xf32>):
      %v = graph.matmul %a, %c : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("fc")
      spmd.yield %v : tensor<2x2xf32>
    }
    %hr = spmd.all_reduce %h {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<2x2xf32> -> #spmd.dist<[id, id]>
    %r = spmd.local(%hr) {variant = "relu.replicate, relu.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>):
      %v = graph.relu %a : tensor<2x2xf32> loc("relu")
      spmd.yield %v : tensor<2x2xf32>
    }
    %l = spmd.local(%r, %y) {variant = "cross_entropy.replicate, cross_entropy.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<2x2xf32>, %c: tensor<2xi64>):
      %v = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> loc("loss")
      spmd.yield %v : tensor<f32>
    }
    return %l : tensor<f32>
  }
}
