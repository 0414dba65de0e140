// The model of spmd-to-torch-collectives.mlir (weft-run checks the plan
// against it; its input names reach the program through --graph). The
// max is the plan's stop-gradient all_reduce, so only losses agree.
func.func @main(%x: tensor<6x4xf32> {graph.input = "x"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<4x4xf32>
  %u = graph.parameter "u" : tensor<4x4xf32>
  %c = graph.matmul %x, %w : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  %f = graph.matmul %c, %u : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  %g = graph.reduce_sum %f {axes = array<i64: 0>, keepdims = true} : tensor<6x4xf32> -> tensor<1x4xf32>
  %m = graph.reduce_max %g {axes = array<i64: 0, 1>, keepdims = false} : tensor<1x4xf32> -> tensor<f32>
  %s = graph.reduce_sum %g {axes = array<i64: 0, 1>, keepdims = false} : tensor<1x4xf32> -> tensor<f32>
  %l = graph.add %s, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
