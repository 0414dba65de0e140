// A 2-layer MLP, data parallel on two-class.yaml (one V100, one P100): the
// batch of 64 split 40 : 24, the first layer's bias stored ZeRO-3 (sharded
// 64 : 64 and gathered before use), the loss all-reduced.
module attributes {
  spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 64, ratios = [0.625, 0.375], sizes = [40, 24]>,
    #spmd.segment<id = 1, extent = 128, ratios = [0.5, 0.5], sizes = [64, 64]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<64x1024xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>},
                  %y: tensor<64xi64> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) -> tensor<f32> {
    %w1 = spmd.parameter "fc1.weight" {strategy = #spmd.strategy<replicated>} : tensor<1024x128xf32> -> #spmd.dist<[id, id]>
    %b0 = spmd.parameter "fc1.bias" {strategy = #spmd.strategy<zero3>} : tensor<128xf32> -> #spmd.dist<[gather(0, 1), id]>
    %w2 = spmd.parameter "fc2.weight" {strategy = #spmd.strategy<replicated>} : tensor<128x10xf32> -> #spmd.dist<[id, id]>
    %b = spmd.all_gather %b0 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<128xf32> -> #spmd.dist<[id, id]> loc("fc1.bias")
    %h = spmd.local (%x, %w1) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x1024xf32>, tensor<1024x128xf32>) -> tensor<64x128xf32> {
    ^bb0(%a: tensor<64x1024xf32>, %c: tensor<1024x128xf32>):
      %m = graph.matmul %a, %c : (tensor<64x1024xf32>, tensor<1024x128xf32>) -> tensor<64x128xf32> loc("fc1")
      spmd.yield %m : tensor<64x128xf32>
    }
    %hb = spmd.local (%h, %b) {variant = "add.split", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
    ^bb0(%a: tensor<64x128xf32>, %c: tensor<128xf32>):
      %m = graph.add %a, %c : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> loc("fc1.add")
      spmd.yield %m : tensor<64x128xf32>
    }
    %r = spmd.local (%hb) {variant = "relu.split", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x128xf32>) -> tensor<64x128xf32> {
    ^bb0(%a: tensor<64x128xf32>):
      %m = graph.relu %a : tensor<64x128xf32> loc("relu")
      spmd.yield %m : tensor<64x128xf32>
    }
    %l = spmd.local (%r, %w2) {variant = "matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), id]>]} : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32> {
    ^bb0(%a: tensor<64x128xf32>, %c: tensor<128x10xf32>):
      %m = graph.matmul %a, %c : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32> loc("fc2")
      spmd.yield %m : tensor<64x10xf32>
    }
    %p = spmd.local (%l, %y) {variant = "cross_entropy.split-batch", dists = [#spmd.dist<[sum, id]>]} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<64x10xf32>, %c: tensor<64xi64>):
      %m = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32> loc("loss")
      spmd.yield %m : tensor<f32>
    }
    %loss = spmd.all_reduce %p {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]> loc("loss.sum")
    return %loss : tensor<f32>
  }
}
