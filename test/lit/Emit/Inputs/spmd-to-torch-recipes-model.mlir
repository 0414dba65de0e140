// The model of spmd-to-torch-recipes.mlir: weft-run checks the plan
// against it and spmd-to-torch-run.test the emitted program.
func.func @main(%ids: tensor<2x3xi64> {graph.input = "ids"},
                %y: tensor<6xi64> {graph.input = "labels"}) -> tensor<f32> {
  %e = graph.parameter "embed" : tensor<8x4xf32>
  %g = graph.parameter "ln.weight" : tensor<4xf32>
  %b = graph.parameter "ln.bias" : tensor<4xf32>
  %w = graph.parameter "proj.weight" : tensor<4x6xf32>
  %c = graph.parameter "proj.bias" : tensor<6xf32>
  %x = graph.gather %e, %ids {axis = 0 : i64} : (tensor<8x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %n = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %d = graph.dropout %n {ratio = 0.1 : f64} : tensor<2x3x4xf32>
  %s = graph.softmax %d {axis = -1 : i64} : tensor<2x3x4xf32>
  %r = graph.reshape %s : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %h = graph.matmul %r, %w : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32>
  %hb = graph.add %h, %c : (tensor<6x6xf32>, tensor<6xf32>) -> tensor<6x6xf32>
  %o = graph.log_softmax %hb {axis = 1 : i64} : tensor<6x6xf32>
  %l0 = graph.nll_loss %o, %y {reduction = "mean"} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32>
  %l1 = graph.cross_entropy %hb, %y {reduction = "sum"} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32>
  %l = graph.add %l0, %l1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
