func.func @main(%arg0: tensor<2xcomplex<f32>> {graph.input = "z"}) -> (tensor<2xcomplex<f32>> {graph.output = "z"}) {
  return %arg0 : tensor<2xcomplex<f32>>
}
