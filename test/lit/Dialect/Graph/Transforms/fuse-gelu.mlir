// RUN: weft-opt --graph-fuse-gelu --split-input-file %s | FileCheck %s

// PyTorch's and weft-zoo's export: (x · (1 + erf(x / √2))) · 0.5. The chain
// and its constants disappear.

// CHECK-LABEL: func.func @torch_form
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = graph.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @torch_form(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.constant dense<1.41421354> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %t = graph.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = graph.erf %t : tensor<4x8xf32>
  %a = graph.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = graph.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// x · (0.5 · (1 + erf(x · 1/√2))), constants on the left; x is itself a
// product, which stays.

// CHECK-LABEL: func.func @scaled_by_reciprocal
// CHECK: %[[X:.*]] = graph.mul %arg0, %arg1
// CHECK-NEXT: %[[Y:.*]] = graph.gelu %[[X]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @scaled_by_reciprocal(%p: tensor<2x3xf32>, %q: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %x = graph.mul %p, %q : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = graph.constant dense<0.707106769> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %t = graph.mul %r, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = graph.erf %t : tensor<2x3xf32>
  %a = graph.add %one, %e : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = graph.mul %half, %a : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = graph.mul %x, %h : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// (x · 0.5) · (1 + erf(x / √2)); a constant still used elsewhere stays.

// CHECK-LABEL: func.func @half_first
// CHECK: %[[HALF:.*]] = graph.constant dense<5.000000e-01>
// CHECK: %[[Y:.*]] = graph.gelu %arg0 : tensor<5xf32>
// CHECK: %[[Z:.*]] = graph.mul %[[Y]], %[[HALF]]
// CHECK: return %[[Z]]
func.func @half_first(%x: tensor<5xf32>) -> tensor<5xf32> {
  %c = graph.constant dense<1.41421354> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %hx = graph.mul %x, %half : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %t = graph.div %x, %c : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %e = graph.erf %t : tensor<5xf32>
  %a = graph.add %e, %one : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %y = graph.mul %hx, %a : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %z = graph.mul %y, %half : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %z : tensor<5xf32>
}

// -----

// Not GELU: a wrong scale, a used intermediate, a factor other than x.

// CHECK-LABEL: func.func @wrong_scale
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @wrong_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<2.0> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %t = graph.div %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @intermediate_used
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @intermediate_used(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = graph.constant dense<1.41421354> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %t = graph.div %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @other_factor
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @other_factor(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<1.41421354> : tensor<f32> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32> : tensor<f32>
  %t = graph.div %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %w, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
