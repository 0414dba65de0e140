// The model of spmd-to-torch-strategies.mlir, with input names that are
// not Python identifiers or that the emitter uses for something else.
func.func @main(%ids: tensor<4x3xi64> {graph.input = "input.ids"},
                %y: tensor<4x3xi64> {graph.input = "R"},
                %keep: tensor<12x5xi1> {graph.input = "v2"}) -> tensor<f32> {
  %e = graph.parameter "emb" : tensor<10x8xf32>
  %g = graph.parameter "ln.weight" : tensor<8xf32>
  %b = graph.parameter "ln.bias" : tensor<8xf32>
  %bw = graph.parameter "bn.weight" : tensor<3xf32>
  %bb = graph.parameter "bn.bias" : tensor<3xf32>
  %bm = graph.buffer "bn.running_mean" : tensor<3xf32>
  %bv = graph.buffer "bn.running_var" : tensor<3xf32>
  %w = graph.parameter "fc.weight" : tensor<8x5xf32>
  %fb = graph.parameter "fc.bias" : tensor<5xf32>
  %x = graph.gather %e, %ids {axis = 0 : i64} : (tensor<10x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %n = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x3x8xf32>
  %bn = graph.batch_norm %n, %bw, %bb, %bm, %bv {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64, training = false} : (tensor<4x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x8xf32>
  %r = graph.reshape %bn : tensor<4x3x8xf32> -> tensor<12x8xf32>
  %h = graph.matmul %r, %w : (tensor<12x8xf32>, tensor<8x5xf32>) -> tensor<12x5xf32>
  %hb = graph.add %h, %fb : (tensor<12x5xf32>, tensor<5xf32>) -> tensor<12x5xf32>
  %k = graph.select %keep, %hb, %h : (tensor<12x5xi1>, tensor<12x5xf32>, tensor<12x5xf32>) -> tensor<12x5xf32>
  %yr = graph.reshape %y : tensor<4x3xi64> -> tensor<12xi64>
  %l = graph.cross_entropy %k, %yr {reduction = "mean"} : (tensor<12x5xf32>, tensor<12xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
