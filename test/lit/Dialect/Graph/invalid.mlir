// RUN: weft-opt %s -split-input-file -verify-diagnostics

func.func @parameter_int() {
  // expected-error @+1 {{expected a floating-point parameter}}
  %0 = graph.parameter "ids" : tensor<4xi64>
  return
}

// -----

func.func @parameter_value_type() {
  // expected-error @+1 {{value type 'tensor<3xf32>' differs from result type 'tensor<2xf32>'}}
  %0 = graph.parameter "b" {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : tensor<2xf32>
  return
}

// -----

func.func @buffer_empty_name() {
  // expected-error @+1 {{expected a non-empty name}}
  %0 = graph.buffer "" : tensor<4xi64>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{value type 'tensor<f32>' differs from result type 'tensor<1xf32>'}}
  %0 = graph.constant dense<1.0> : tensor<f32> : tensor<1xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<9x2xf32>) {
  // expected-error @+1 {{contraction dims differ}}
  %0 = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<9x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+1 {{expected operands of rank >= 2}}
  %0 = graph.matmul %a, %b : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+1 {{expected result shape [4x2], found [4x3]}}
  %0 = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<2x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{weight expects 2 input channels, input has 3}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected result shape [2x4x6x6], found [2x4x8x8]}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected positive strides}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operands don't have broadcast-compatible shapes}}
  %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @compare_predicate(%a: tensor<4xi64>) {
  // expected-error @+1 {{unknown predicate 'lte'}}
  %0 = graph.compare %a, %a {predicate = "lte"} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @select_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{expected lhs, rhs and result of one element type}}
  %0 = graph.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @clip_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected min <= max}}
  %0 = graph.clip %a {min = 6.0, max = 0.0} : tensor<4xf32>
  return
}

// -----

func.func @expand_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{cannot broadcast [3] to [4x8]}}
  %0 = graph.expand %a : tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.softmax %a {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.log_softmax %a {axis = -3 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{expected scale shape [8], found [4]}}
  %0 = graph.layer_norm %x, %g, %g {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x4x8x8xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{expected per-channel shape [4], found [3]}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<2x4x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected sorted, unique axes}}
  %0 = graph.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_mean_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected result shape [4x1], found [4]}}
  %0 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_max_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.reduce_max %x {axes = array<i64: 2>, keepdims = false} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{element counts differ: [4x8] vs [5x8]}}
  %0 = graph.reshape %x : tensor<4x8xf32> -> tensor<5x8xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_sum(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{pieces add up to 16 along axis 1, expected 9}}
  %0 = graph.concat %a, %a {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @split_other_dim(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{pieces differ in dim 0}}
  %0:2 = graph.split %a {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<3x4xf32>)
  return
}

// -----

func.func @slice_window(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{window [0, 9) is outside dim 1 of extent 8}}
  %0 = graph.slice %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 9>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

func.func @gather_result(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{expected result shape [2x3x4], found [2x4]}}
  %0 = graph.gather %t, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @flatten_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected result shape [6x4], found [2x12]}}
  %0 = graph.flatten %x {axis = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  return
}

// -----

func.func @max_pool_result(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{expected result shape [2x4x4x4], found [2x4x8x8]}}
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @avg_pool_kernel(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{expected a positive 2-d kernel}}
  %0 = graph.avg_pool %x {kernel = array<i64: 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return
}

// -----

func.func @max_pool_dilations(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{expected 2 positive dilations}}
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 0, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x7x6xf32>
  return
}

// -----

func.func @max_pool_dilated_result(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{expected result shape [2x4x6x4], found [2x4x7x7]}}
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 4>} : tensor<2x4x8x8xf32> -> tensor<2x4x7x7xf32>
  return
}

// -----

func.func @global_avg_pool_result(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{expected result shape [2x4x1x1], found [2x4]}}
  %0 = graph.global_avg_pool %x : tensor<2x4x8x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>) {
  // expected-error @+1 {{ratio 1.000000e+00 is outside [0, 1)}}
  %0 = graph.dropout %x {ratio = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @cross_entropy_labels(%x: tensor<8x10xf32>, %y: tensor<9xi64>) {
  // expected-error @+1 {{expected labels shape [8], found [9]}}
  %0 = graph.cross_entropy %x, %y {reduction = "mean"} : (tensor<8x10xf32>, tensor<9xi64>) -> tensor<f32>
  return
}

// -----

func.func @nll_reduction(%x: tensor<8x10xf32>, %y: tensor<8xi64>) {
  // expected-error @+1 {{unknown reduction 'none'}}
  %0 = graph.nll_loss %x, %y {reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @top2_gating_hidden(%t: tensor<2x8x16xf32>, %w: tensor<12x4xf32>) {
  // expected-error @+1 {{gate expects hidden size 12, tokens have 16}}
  %0:2 = graph.top2_gating %t, %w : (tensor<2x8x16xf32>, tensor<12x4xf32>) -> (tensor<2x8x4x5xf32>, tensor<2x8x4x5xf32>)
  return
}
