// The minimal case of issue 24: x · W → relu → cross-entropy, with x row 0
// = [1e-8, 1, -1, 1e-8] (Inputs/kink-x.npy) and W column 0 all ones: h[0, 0]
// is 1e-8 summed in one order and 0 in two halves, a relu kink.
func.func @main(%x: tensor<2x4xf32> {graph.input = "x"}, %y: tensor<2xi64> {graph.input = "y"}) -> tensor<f32> {
  %w = graph.parameter "w" {value = dense<[[1.0, 0.5], [1.0, -0.5], [1.0, 0.25], [1.0, 1.0]]> : tensor<4x2xf32>} : tensor<4x2xf32>
  %h = graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("fc")
  %r = graph.relu %h : tensor<2x2xf32> loc("relu")
  %l = graph.cross_entropy %r, %y {reduction = "mean"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> loc("loss")
  return %l : tensor<f32>
}
