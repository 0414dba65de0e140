// A 2-layer MLP, data parallel on examples/clusters/hap-16.yaml (2 V100
// nodes and 6 P100 nodes of 2 devices): the batch of 80 split 8 per V100
// and 4 per P100, the loss all-reduced inside the nodes, then across.
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [2, 3, 4, 5, 6, 7]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 80, ratios = [0.1, 0.05], sizes = [8, 8, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<80x1024xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>},
                  %y: tensor<80xi64> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}) -> tensor<f32> {
    %w1 = spmd.parameter "fc1.weight" {strategy = #spmd.strategy<replicated>} : tensor<1024x512xf32> -> #spmd.dist<[id, id]>
    %w2 = spmd.parameter "fc2.weight" {strategy = #spmd.strategy<replicated>} : tensor<512x10xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local (%x, %w1) {variant = "matmul.split-lhs-rows, matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>]} : (tensor<80x1024xf32>, tensor<1024x512xf32>) -> tensor<80x512xf32> {
    ^bb0(%a: tensor<80x1024xf32>, %c: tensor<1024x512xf32>):
      %m = graph.matmul %a, %c : (tensor<80x1024xf32>, tensor<1024x512xf32>) -> tensor<80x512xf32> loc("fc1")
      spmd.yield %m : tensor<80x512xf32>
    }
    %r = spmd.local (%h) {variant = "relu.split, relu.split", dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>]} : (tensor<80x512xf32>) -> tensor<80x512xf32> {
    ^bb0(%a: tensor<80x512xf32>):
      %m = graph.relu %a : tensor<80x512xf32> loc("relu")
      spmd.yield %m : tensor<80x512xf32>
    }
    %l = spmd.local (%r, %w2) {variant = "matmul.split-lhs-rows, matmul.split-lhs-rows", dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>]} : (tensor<80x512xf32>, tensor<512x10xf32>) -> tensor<80x10xf32> {
    ^bb0(%a: tensor<80x512xf32>, %c: tensor<512x10xf32>):
      %m = graph.matmul %a, %c : (tensor<80x512xf32>, tensor<512x10xf32>) -> tensor<80x10xf32> loc("fc2")
      spmd.yield %m : tensor<80x10xf32>
    }
    %p = spmd.local (%l, %y) {variant = "cross_entropy.split-batch, cross_entropy.split-batch", dists = [#spmd.dist<[sum, sum]>]} : (tensor<80x10xf32>, tensor<80xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<80x10xf32>, %c: tensor<80xi64>):
      %m = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<80x10xf32>, tensor<80xi64>) -> tensor<f32> loc("loss")
      spmd.yield %m : tensor<f32>
    }
    %q = spmd.all_reduce %p {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[sum, id]> loc("loss.node")
    %loss = spmd.all_reduce %q {axis = 0 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]> loc("loss.all")
    return %loss : tensor<f32>
  }
}
