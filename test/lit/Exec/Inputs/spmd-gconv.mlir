// A grouped convolution (3 groups) for spmd-gconv-plan.mlir.
func.func @main(%x: tensor<2x6x5x5xf32> {graph.input = "x"}) -> tensor<f32> {
  %w = graph.parameter "w" : tensor<6x2x3x3xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32> loc("gconv")
  %q = graph.mul %c, %c : (tensor<2x6x3x3xf32>, tensor<2x6x3x3xf32>) -> tensor<2x6x3x3xf32> loc("sq")
  %m = graph.reduce_mean %q {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<2x6x3x3xf32> -> tensor<f32> loc("mean")
  return %m : tensor<f32>
}
