// A small CNN for a hand-written plan (spmd-conv-plan.mlir): convolution,
// batch norm with batch statistics, ReLU, max and global average pooling,
// flatten, a linear classifier.
func.func @main(%x: tensor<5x4x6x6xf32> {graph.input = "images"},
                %y: tensor<5xi64> {graph.input = "labels"}) -> tensor<f32> {
  %w = graph.parameter "conv.weight" : tensor<6x4x3x3xf32>
  %b = graph.parameter "conv.bias" {value = dense<[0.5, -0.5, 0.25, 1.0, -1.0, 0.75]> : tensor<6xf32>} : tensor<6xf32>
  %s = graph.parameter "bn.weight" : tensor<6xf32>
  %t = graph.parameter "bn.bias" : tensor<6xf32>
  %rm = graph.buffer "bn.running_mean" : tensor<6xf32>
  %rv = graph.buffer "bn.running_var" : tensor<6xf32>
  %fw = graph.parameter "fc.weight" : tensor<6x3xf32>
  %c = graph.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<5x4x6x6xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> loc("conv")
  %n = graph.batch_norm %c, %s, %t, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<5x6x6x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<5x6x6x6xf32> loc("bn")
  %r = graph.relu %n : tensor<5x6x6x6xf32> loc("relu")
  %p = graph.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<5x6x6x6xf32> -> tensor<5x6x3x3xf32> loc("pool")
  %g = graph.global_avg_pool %p : tensor<5x6x3x3xf32> -> tensor<5x6x1x1xf32> loc("gap")
  %f = graph.flatten %g {axis = 1 : i64} : tensor<5x6x1x1xf32> -> tensor<5x6xf32> loc("flatten")
  %h = graph.matmul %f, %fw : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32> loc("fc")
  %l = graph.cross_entropy %h, %y {reduction = "mean"} : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<f32> loc("loss")
  return %l : tensor<f32>
}
