func.func @main(%x: tensor<4x2xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<2x3xf32>
  %c = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32> : tensor<4x2xf32>
  %a = graph.add %x, %c : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = graph.matmul %a, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %l = graph.cross_entropy %m, %y {reduction = "mean"} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
