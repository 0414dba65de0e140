// pipeline-mlp-plan.mlir under GPipe with 4 micro-batches of 4 samples
// (global batch 16), stage 0 replicated on both V100s: the gradient sent
// back is shared by the two devices holding the activation.
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 4 : i64, spmd.schedule = "gpipe", spmd.version = 2 : i64} {
  module @stage0 attributes {
    spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>,
    spmd.mesh = #spmd.mesh<local = [2], classes = [
      #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x64xf32> {spmd.dist = #spmd.dist<[id, id]>}, %y: tensor<4xi64> {spmd.dist = #spmd.dist<[id, id]>}) {
      %w = spmd.parameter "layers.0.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x64xf32> -> #spmd.dist<[id, id]>
      %b = spmd.parameter "layers.0.bias" {strategy = #spmd.strategy<replicated>} : tensor<64xf32> -> #spmd.dist<[id, id]>
      %0 = spmd.local(%x, %w) {dists = [#spmd.dist<[id, id]>], variant = "matmul.replicate, matmul.replicate"} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>, %c: tensor<64x64xf32>):
        %v = graph.matmul %a, %c : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      %1 = spmd.local(%0, %b) {dists = [#spmd.dist<[id, id]>], variant = "add.replicate, add.replicate"} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>, %c: tensor<64xf32>):
        %v = graph.add %a, %c : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      %2 = spmd.local(%1) {dists = [#spmd.dist<[id, id]>], variant = "relu.replicate, relu.replicate"} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>):
        %v = graph.relu %a : tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      spmd.send %2 {peer = 1 : i64} : tensor<4x64xf32>
      return
    }
  }
  module @stage1 attributes {
    spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>,
    spmd.mesh = #spmd.mesh<local = [2], classes = [
      #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 64, ratios = [0.5], sizes = [32, 32]>]} {
    func.func @main(%x: tensor<4x64xf32> {spmd.dist = #spmd.dist<[id, id]>}, %y: tensor<4xi64> {spmd.dist = #spmd.dist<[id, id]>}) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x64xf32> -> #spmd.dist<[id, id]>
      %w1 = spmd.parameter "layers.1.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x64xf32> -> #spmd.dist<[id, gather(1, 0)]>
      %b1 = spmd.parameter "layers.1.bias" {strategy = #spmd.strategy<replicated>} : tensor<64xf32> -> #spmd.dist<[id, gather(0, 0)]>
      %w2 = spmd.parameter "layers.2.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x10xf32> -> #spmd.dist<[id, gather(0, 0)]>
      %b2 = spmd.parameter "layers.2.bias" {strategy = #spmd.strategy<replicated>} : tensor<10xf32> -> #spmd.dist<[id, id]>
      %0 = spmd.local(%h, %w1) {dists = [#spmd.dist<[id, gather(1, 0)]>], variant = "matmul.replicate, matmul.split-cols"} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>, %c: tensor<64x64xf32>):
        %v = graph.matmul %a, %c : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      %1 = spmd.local(%0, %b1) {dists = [#spmd.dist<[id, gather(1, 0)]>], variant = "add.replicate, add.split"} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>, %c: tensor<64xf32>):
        %v = graph.add %a, %c : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      %2 = spmd.local(%1) {dists = [#spmd.dist<[id, gather(1, 0)]>], variant = "relu.replicate, relu.split"} : (tensor<4x64xf32>) -> tensor<4x64xf32> {
      ^bb0(%a: tensor<4x64xf32>):
        %v = graph.relu %a : tensor<4x64xf32>
        spmd.yield %v : tensor<4x64xf32>
      }
      %3 = spmd.local(%2, %w2) {dists = [#spmd.dist<[id, sum]>], variant = "matmul.replicate, matmul.split-contraction"} : (tensor<4x64xf32>, tensor<64x10xf32>) -> tensor<4x10xf32> {
      ^bb0(%a: tensor<4x64xf32>, %c: tensor<64x10xf32>):
        %v = graph.matmul %a, %c : (tensor<4x64xf32>, tensor<64x10xf32>) -> tensor<4x10xf32>
        spmd.yield %v : tensor<4x10xf32>
      }
      %4 = spmd.all_reduce %3 {axis = 1 : i64} : tensor<4x10xf32> -> #spmd.dist<[id, id]>
      %5 = spmd.local(%4, %b2) {dists = [#spmd.dist<[id, id]>], variant = "add.replicate, add.replicate"} : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32> {
      ^bb0(%a: tensor<4x10xf32>, %c: tensor<10xf32>):
        %v = graph.add %a, %c : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
        spmd.yield %v : tensor<4x10xf32>
      }
      %6 = spmd.local(%5, %y) {dists = [#spmd.dist<[id, id]>], variant = "cross_entropy.replicate, cross_entropy.replicate"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32> {
      ^bb0(%a: tensor<4x10xf32>, %c: tensor<4xi64>):
        %v = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
        spmd.yield %v : tensor<f32>
      }
      return %6 : tensor<f32>
    }
  }
}
