// kink-residual.mlir on two devices: the first layer's contraction split
// 2|2, the second layer split by rows of a copy (spmd.shard) of the first
// relu's value, whose other use (the residual add) reads it whole.
module attributes {
  spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>,
    #spmd.segment<id = 1, extent = 2, ratios = [0.5], sizes = [1, 1]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<2x4xf32> {spmd.dist = #spmd.dist<[gather(1, 0), id]>}, %y: tensor<2xi64> {spmd.dist = #spmd.dist<[id, id]>}) -> tensor<f32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x2xf32> -> #spmd.dist<[gather(0, 0), id]>
    %v = spmd.parameter "v" {strategy = #spmd.strategy<replicated>} : tensor<2x2xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local(%x, %w) {variant = "matmul.split-contraction, matmul.replicate", dists = [#spmd.dist<[sum, id]>]} : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x4xf32>, %c: tensor<4x2xf32>):
      %o = graph.matmul %a, %c : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer1.fc")
      spmd.yield %o : tensor<2x2xf32>
    }
    %hr = spmd.all_reduce %h {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<2x2xf32> -> #spmd.dist<[id, id]>
    %r1 = spmd.local(%hr) {variant = "relu.replicate, relu.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>):
      %o = graph.relu %a : tensor<2x2xf32> loc("layer1.relu")
      spmd.yield %o : tensor<2x2xf32>
    }
    %r1s = spmd.shard %r1 {axis = 0 : i64} : tensor<2x2xf32> -> #spmd.dist<[gather(0, 1), id]>
    %m = spmd.local(%r1s, %v) {variant = "matmul.split-rows, matmul.replicate", dists = [#spmd.dist<[gather(0, 1), id]>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>, %c: tensor<2x2xf32>):
      %o = graph.matmul %a, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("layer2.fc")
      spmd.yield %o : tensor<2x2xf32>
    }
    %r2 = spmd.local(%m) {variant = "relu.split, relu.replicate", dists = [#spmd.dist<[gather(0, 1), id]>]} : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>):
      %o = graph.relu %a : tensor<2x2xf32> loc("layer2.relu")
      spmd.yield %o : tensor<2x2xf32>
    }
    %r2g = spmd.all_gather %r2 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<2x2xf32> -> #spmd.dist<[id, id]>
    %s = spmd.local(%r2g, %r1) {variant = "add.replicate, add.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>, %c: tensor<2x2xf32>):
      %o = graph.add %a, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("layer2.residual")
      spmd.yield %o : tensor<2x2xf32>
    }
    %l = spmd.local(%s, %y) {variant = "cross_entropy.replicate, cross_entropy.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<2x2xf32>, %c: tensor<2xi64>):
      %o = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> loc("loss")
      spmd.yield %o : tensor<f32>
    }
    return %l : tensor<f32>
  }
}
