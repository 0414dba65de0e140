// A two-layer residual network whose first layer has a relu kink (the
// minimal case of issue 24: h[0, 0] is 1e-8 summed in one order, 0 in two
// halves) and whose first relu's value has two uses, the second layer and
// the residual add; the second layer's inputs are far from any kink.
func.func @main(%x: tensor<2x4xf32> {graph.input = "x"}, %y: tensor<2xi64> {graph.input = "y"}) -> tensor<f32> {
  %w = graph.parameter "w" {value = dense<[[1.0, 0.5], [1.0, 0.5], [1.0, -0.25], [1.0, 1.0]]> : tensor<4x2xf32>} : tensor<4x2xf32>
  %v = graph.parameter "v" {value = dense<[[0.75, -0.5], [0.5, 1.25]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %h = graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer1.fc")
  %r1 = graph.relu %h : tensor<2x2xf32> loc("layer1.relu")
  %m = graph.matmul %r1, %v : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("layer2.fc")
  %r2 = graph.relu %m : tensor<2x2xf32> loc("layer2.relu")
  %s = graph.add %r2, %r1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("layer2.residual")
  %l = graph.cross_entropy %s, %y {reduction = "mean"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32> loc("loss")
  return %l : tensor<f32>
}
