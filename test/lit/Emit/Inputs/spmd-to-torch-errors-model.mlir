// The model of spmd-to-torch-errors.mlir.
func.func @main(%x: tensor<4x2xf32> {graph.input = "x"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<2x3xf32>
  %h = graph.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %m = graph.reduce_mean %h {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %m : tensor<f32>
}
