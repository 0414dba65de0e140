// RUN: weft-opt %s | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// CHECK-LABEL: func @leaves
func.func @leaves() -> (tensor<4x8xf32>, tensor<128xi64>, tensor<f32>) {
  // CHECK: graph.parameter "w" : tensor<4x8xf32>
  %w = graph.parameter "w" : tensor<4x8xf32>
  // CHECK: graph.buffer "pos" : tensor<128xi64>
  %p = graph.buffer "pos" : tensor<128xi64>
  // CHECK: graph.constant dense<8.000000e+00> : tensor<f32>
  %c = graph.constant dense<8.0> : tensor<f32> : tensor<f32>
  return %w, %p, %c : tensor<4x8xf32>, tensor<128xi64>, tensor<f32>
}

// CHECK-LABEL: func @with_value
func.func @with_value() -> tensor<2xf32> {
  // CHECK: graph.parameter "b" {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
  %b = graph.parameter "b" {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  return %b : tensor<2xf32>
}

// CHECK-LABEL: func @contractions
func.func @contractions(%x: tensor<2x16x64xf32>, %w: tensor<64x32xf32>,
                        %img: tensor<2x3x8x8xf32>, %k: tensor<4x3x3x3xf32>,
                        %kb: tensor<4xf32>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  %0 = graph.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  // CHECK: graph.conv2d {{.*}}group = 1 : i64
  %1 = graph.conv2d %img, %k {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: graph.conv2d {{.*}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %2 = graph.conv2d %img, %k, %kb {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  return
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x8xi64>, %z: tensor<i64>) {
  // CHECK: graph.add
  %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.sub
  %1 = graph.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.mul
  %2 = graph.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.div
  %3 = graph.div %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.pow
  %4 = graph.pow %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.min
  %5 = graph.min %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.max
  %6 = graph.max %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.compare %{{.*}}, %{{.*}} {predicate = "eq"}
  %7 = graph.compare %i, %z {predicate = "eq"} : (tensor<4x8xi64>, tensor<i64>) -> tensor<4x8xi1>
  // CHECK: graph.select
  %8 = graph.select %7, %a, %0 : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.sqrt
  %9 = graph.sqrt %a : tensor<4x8xf32>
  // CHECK: graph.rsqrt
  %10 = graph.rsqrt %a : tensor<4x8xf32>
  // CHECK: graph.neg
  %11 = graph.neg %a : tensor<4x8xf32>
  // CHECK: graph.relu
  %12 = graph.relu %a : tensor<4x8xf32>
  // CHECK: graph.gelu
  %13 = graph.gelu %a : tensor<4x8xf32>
  // CHECK: graph.tanh
  %14 = graph.tanh %a : tensor<4x8xf32>
  // CHECK: graph.sigmoid
  %15 = graph.sigmoid %a : tensor<4x8xf32>
  // CHECK: graph.erf
  %16 = graph.erf %a : tensor<4x8xf32>
  // CHECK: graph.exp
  %17 = graph.exp %a : tensor<4x8xf32>
  // CHECK: graph.log
  %18 = graph.log %a : tensor<4x8xf32>
  // CHECK: graph.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %19 = graph.clip %a {min = 0.0, max = 6.0} : tensor<4x8xf32>
  // CHECK: graph.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xf32>
  %20 = graph.cast %i : tensor<4x8xi64> -> tensor<4x8xf32>
  // CHECK: graph.expand %{{.*}} : tensor<8xf32> -> tensor<4x8xf32>
  %21 = graph.expand %b : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func @normalisation
func.func @normalisation(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %img: tensor<2x4x8x8xf32>, %c: tensor<4xf32>) {
  // CHECK: graph.softmax %{{.*}} {axis = -1 : i64}
  %0 = graph.softmax %x {axis = -1 : i64} : tensor<2x16x64xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 2 : i64}
  %1 = graph.log_softmax %x {axis = 2 : i64} : tensor<2x16x64xf32>
  // CHECK: graph.layer_norm
  %2 = graph.layer_norm %x, %g, %g {axis = -1 : i64, epsilon = 1.0e-12 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: graph.batch_norm {{.*}}training = true
  %3 = graph.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  return
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<2x16x64xf32>) {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims = true} : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  // CHECK: graph.reduce_mean {{.*}} -> tensor<16xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x16x64xf32> -> tensor<16xf32>
  // CHECK: graph.reduce_max {{.*}} -> tensor<f32>
  %2 = graph.reduce_max %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x16x64xf32> -> tensor<f32>
  return
}

// CHECK-LABEL: func @movement
func.func @movement(%x: tensor<2x16x64xf32>, %t: tensor<10x64xf32>, %ids: tensor<2x16xi64>) {
  // CHECK: graph.reshape %{{.*}} : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %0 = graph.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  // CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  // CHECK: graph.split %{{.*}} {axis = 2 : i64} : (tensor<2x16x64xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>)
  %2:2 = graph.split %x {axis = 2 : i64} : (tensor<2x16x64xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>)
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64}
  %3 = graph.concat %2#0, %2#1 {axis = 1 : i64} : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x32x32xf32>
  // CHECK: graph.slice %{{.*}} {limits = array<i64: 2, 1, 64>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
  %4 = graph.slice %x {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 1, 64>, steps = array<i64: 1, 1, 1>} : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<10x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  %5 = graph.gather %t, %ids {axis = 0 : i64} : (tensor<10x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  // CHECK: graph.flatten %{{.*}} {axis = 1 : i64} : tensor<2x16x64xf32> -> tensor<2x1024xf32>
  %6 = graph.flatten %x {axis = 1 : i64} : tensor<2x16x64xf32> -> tensor<2x1024xf32>
  return
}

// CHECK-LABEL: func @pooling
func.func @pooling(%x: tensor<2x4x8x8xf32>) {
  // CHECK: graph.max_pool {{.*}} -> tensor<2x4x4x4xf32>
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: graph.avg_pool {{.*}} -> tensor<2x4x8x8xf32>
  %1 = graph.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK: graph.global_avg_pool {{.*}} -> tensor<2x4x1x1xf32>
  %2 = graph.global_avg_pool %x : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  // CHECK: graph.max_pool %{{.*}} {dilations = array<i64: 2, 2>, {{.*}} -> tensor<2x4x6x6xf32>
  %3 = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x6x6xf32>
  // CHECK: graph.avg_pool %{{.*}} {exclude_pad, {{.*}} -> tensor<2x4x8x8xf32>
  %4 = graph.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclude_pad} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return
}

// CHECK-LABEL: func @losses
func.func @losses(%x: tensor<8x10xf32>, %y: tensor<8xi64>, %tok: tensor<2x8x16xf32>, %wg: tensor<16x4xf32>) {
  // CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64}
  %0 = graph.dropout %x {ratio = 0.1 : f64} : tensor<8x10xf32>
  // CHECK: graph.cross_entropy {{.*}}ignore_index = -100 : i64, reduction = "mean"
  %1 = graph.cross_entropy %0, %y {reduction = "mean", ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: graph.nll_loss {{.*}}reduction = "sum"
  %2 = graph.nll_loss %x, %y {reduction = "sum"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: graph.top2_gating {{.*}} -> (tensor<2x8x4x5xf32>, tensor<2x8x4x5xf32>)
  %3:2 = graph.top2_gating %tok, %wg : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> (tensor<2x8x4x5xf32>, tensor<2x8x4x5xf32>)
  return
}
