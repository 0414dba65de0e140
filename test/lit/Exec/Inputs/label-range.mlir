func.func @main() -> tensor<f32> {
  %w = graph.parameter "w" : tensor<1x2xf32>
  %y = graph.constant dense<2> : tensor<1xi64> : tensor<1xi64>
  %l = graph.cross_entropy %w, %y {reduction = "mean"} : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
