// spmd-block.mlir with log_softmax + nll_loss instead of cross_entropy
// (spmd-nll-plan.mlir splits the classes).
func.func @main(%ids: tensor<5x3xi64> {graph.input = "ids"},
                %y: tensor<15xi64> {graph.input = "labels"}) -> tensor<f32> {
  %e = graph.parameter "embed" : tensor<7x4xf32>
  %g = graph.parameter "ln.weight" : tensor<4xf32>
  %b = graph.parameter "ln.bias" : tensor<4xf32>
  %w = graph.parameter "proj" : tensor<4x6xf32>
  %x = graph.gather %e, %ids {axis = 0 : i64} : (tensor<7x4xf32>, tensor<5x3xi64>) -> tensor<5x3x4xf32> loc("embedding")
  %n = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<5x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<5x3x4xf32> loc("ln")
  %s = graph.softmax %n {axis = 2 : i64} : tensor<5x3x4xf32> loc("softmax")
  %r = graph.reshape %s : tensor<5x3x4xf32> -> tensor<15x4xf32> loc("flatten")
  %h = graph.matmul %r, %w : (tensor<15x4xf32>, tensor<4x6xf32>) -> tensor<15x6xf32> loc("proj")
  %o = graph.log_softmax %h {axis = 1 : i64} : tensor<15x6xf32> loc("log_softmax")
  %l = graph.nll_loss %o, %y {reduction = "mean"} : (tensor<15x6xf32>, tensor<15xi64>) -> tensor<f32> loc("loss")
  return %l : tensor<f32>
}
