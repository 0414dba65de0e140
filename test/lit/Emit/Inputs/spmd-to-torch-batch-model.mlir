// The model of spmd-to-torch-batch.mlir: weft-run checks the plan
// against it and spmd-to-torch-run.test the emitted program.
func.func @main(%x: tensor<4x3x4x4xf32> {graph.input = "x"},
                %y: tensor<4xi64> {graph.input = "y"}) -> tensor<f32> attributes {} {
  %cw = graph.parameter "conv.weight" : tensor<5x3x3x3xf32>
  %cb = graph.parameter "conv.bias" : tensor<5xf32>
  %bw = graph.parameter "bn.weight" : tensor<5xf32>
  %bb = graph.parameter "bn.bias" : tensor<5xf32>
  %bm = graph.buffer "bn.running_mean" : tensor<5xf32>
  %bv = graph.buffer "bn.running_var" : tensor<5xf32>
  %fw = graph.parameter "fc.weight" : tensor<5x6xf32>
  %k = graph.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 0.25, 0.125, 1.0, 2.0], [-1.0, -2.0, 0.0, 1.0, 2.0], [3.0, 1.0, 4.0, 1.0, 5.0]]> : tensor<4x5xf32> : tensor<4x5xf32>
  %c = graph.conv2d %x, %cw, %cb {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<4x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32>
  %n = graph.batch_norm %c, %bw, %bb, %bm, %bv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<4x5x4x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32>
  %r = graph.relu %n : tensor<4x5x4x4xf32>
  %p = graph.global_avg_pool %r : tensor<4x5x4x4xf32> -> tensor<4x5x1x1xf32>
  %f = graph.flatten %p {axis = 1 : i64} : tensor<4x5x1x1xf32> -> tensor<4x5xf32>
  %m = graph.mul %f, %k : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %half = graph.constant dense<0.5> : tensor<5xf32> : tensor<5xf32>
  %mh = graph.mul %m, %half : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %sa, %sb = graph.split %mh {axis = 1 : i64} : (tensor<4x5xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>)
  %cc = graph.concat %sb, %sa {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %h = graph.matmul %cc, %fw : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  %sl = graph.slice %h {starts = array<i64: 0, 0>, limits = array<i64: 4, 6>, steps = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x3xf32>
  %l0 = graph.cross_entropy %sl, %y {ignore_index = 2 : i64, reduction = "mean"} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %q = graph.reduce_mean %cc {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x5xf32> -> tensor<f32>
  %l = graph.add %l0, %q : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
