// A contraction with a bias, dropout, a strided slice and a mean: the model
// of spmd-mean-plan.mlir and of the deliberately wrong plans derived from it.
func.func @main(%x: tensor<6x8xf32> {graph.input = "x"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<8x10xf32>
  %b = graph.parameter "b" {value = dense<[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 1.0, 3.0, -2.0, 0.75]> : tensor<10xf32>} : tensor<10xf32>
  %h = graph.matmul %x, %w : (tensor<6x8xf32>, tensor<8x10xf32>) -> tensor<6x10xf32> loc("fc")
  %hb = graph.add %h, %b : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32> loc("bias")
  %d = graph.dropout %hb {ratio = 0.25 : f64} : tensor<6x10xf32> loc("dropout")
  %s = graph.slice %d {starts = array<i64: 0, 1>, limits = array<i64: 6, 9>, steps = array<i64: 1, 2>} : tensor<6x10xf32> -> tensor<6x4xf32> loc("slice")
  %q = graph.mul %s, %s : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> loc("square")
  %m = graph.reduce_mean %q {axes = array<i64: 0, 1>, keepdims = false} : tensor<6x4xf32> -> tensor<f32> loc("mean")
  return %m : tensor<f32>
}
