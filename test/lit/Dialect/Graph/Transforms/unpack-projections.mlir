// RUN: weft-opt --graph-unpack-projections --split-input-file %s | FileCheck %s

// torch.nn.MultiheadAttention: x @ W^T through a transpose of the packed
// parameter, the packed bias added first, three slices of the activation.
// Each slice becomes a matmul over a view of the parameter's rows (before
// the transpose) plus the matching third of the bias.

// CHECK-LABEL: func.func @torch_packed_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<16x2x32xf32>, %[[W:.*]]: tensor<96x32xf32>, %[[B:.*]]: tensor<96xf32>)
// CHECK-NOT: tensor<16x2x96xf32>
// CHECK: %[[BQ:.*]] = graph.slice %[[B]] {limits = array<i64: 32>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<96xf32> -> tensor<32xf32>
// CHECK: %[[WQ:.*]] = graph.slice %[[W]] {limits = array<i64: 32, 32>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<96x32xf32> -> tensor<32x32xf32>
// CHECK: %[[WQT:.*]] = graph.transpose %[[WQ]] {perm = array<i64: 1, 0>}
// CHECK: %[[MQ:.*]] = graph.matmul %[[X]], %[[WQT]] : (tensor<16x2x32xf32>, tensor<32x32xf32>) -> tensor<16x2x32xf32>
// CHECK: %[[Q:.*]] = graph.add %[[BQ]], %[[MQ]]
// CHECK: %[[BK:.*]] = graph.slice %[[B]] {limits = array<i64: 64>, starts = array<i64: 32>
// CHECK: %[[WK:.*]] = graph.slice %[[W]] {limits = array<i64: 64, 32>, starts = array<i64: 32, 0>
// CHECK: %[[WKT:.*]] = graph.transpose %[[WK]]
// CHECK: %[[MK:.*]] = graph.matmul %[[X]], %[[WKT]]
// CHECK: %[[K:.*]] = graph.add %[[BK]], %[[MK]]
// CHECK: %[[BV:.*]] = graph.slice %[[B]] {limits = array<i64: 96>, starts = array<i64: 64>
// CHECK: %[[WV:.*]] = graph.slice %[[W]] {limits = array<i64: 96, 32>, starts = array<i64: 64, 0>
// CHECK: %[[WVT:.*]] = graph.transpose %[[WV]]
// CHECK: %[[MV:.*]] = graph.matmul %[[X]], %[[WVT]]
// CHECK: %[[V:.*]] = graph.add %[[BV]], %[[MV]]
// CHECK-NOT: tensor<16x2x96xf32>
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @torch_packed_qkv(%x: tensor<16x2x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>) -> (tensor<16x2x32xf32>, tensor<16x2x32xf32>, tensor<16x2x32xf32>) {
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<96x32xf32> -> tensor<32x96xf32>
  %p = graph.matmul %x, %wt : (tensor<16x2x32xf32>, tensor<32x96xf32>) -> tensor<16x2x96xf32>
  %pb = graph.add %b, %p : (tensor<96xf32>, tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %q = graph.slice %pb {starts = array<i64: 0, 0, 0>, limits = array<i64: 16, 2, 32>, steps = array<i64: 1, 1, 1>} : tensor<16x2x96xf32> -> tensor<16x2x32xf32>
  %k = graph.slice %pb {starts = array<i64: 0, 0, 32>, limits = array<i64: 16, 2, 64>, steps = array<i64: 1, 1, 1>} : tensor<16x2x96xf32> -> tensor<16x2x32xf32>
  %v = graph.slice %pb {starts = array<i64: 0, 0, 64>, limits = array<i64: 16, 2, 96>, steps = array<i64: 1, 1, 1>} : tensor<16x2x96xf32> -> tensor<16x2x32xf32>
  return %q, %k, %v : tensor<16x2x32xf32>, tensor<16x2x32xf32>, tensor<16x2x32xf32>
}

// -----

// A Gemm with beta = 0.5 and an untransposed [K, 3H] weight: the weight's
// columns are sliced, and so is the scaled bias (a view of the packed bias
// expression); the bias stays on its side of the add.

// CHECK-LABEL: func.func @gemm_packed_split
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x12xf32>, %[[B:.*]]: tensor<12xf32>, %[[H:.*]]: tensor<f32>)
// CHECK-NOT: tensor<4x12xf32>
// CHECK: %[[BS:.*]] = graph.mul %[[B]], %[[H]]
// CHECK: %[[W0:.*]] = graph.slice %[[W]] {limits = array<i64: 8, 4>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x12xf32> -> tensor<8x4xf32>
// CHECK: %[[M0:.*]] = graph.matmul %[[X]], %[[W0]] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[B0:.*]] = graph.slice %[[BS]] {limits = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<12xf32> -> tensor<4xf32>
// CHECK: %[[Y0:.*]] = graph.add %[[M0]], %[[B0]]
// CHECK: %[[W1:.*]] = graph.slice %[[W]] {limits = array<i64: 8, 12>, starts = array<i64: 0, 4>
// CHECK: %[[M1:.*]] = graph.matmul %[[X]], %[[W1]]
// CHECK: %[[B1:.*]] = graph.slice %[[BS]] {limits = array<i64: 12>, starts = array<i64: 4>
// CHECK: %[[Y1:.*]] = graph.add %[[M1]], %[[B1]]
// CHECK-NOT: graph.split
// CHECK: return %[[Y0]], %[[Y1]]
func.func @gemm_packed_split(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>, %b: tensor<12xf32>, %half: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %bs = graph.mul %b, %half : (tensor<12xf32>, tensor<f32>) -> tensor<12xf32>
  %y = graph.add %m, %bs : (tensor<4x12xf32>, tensor<12xf32>) -> tensor<4x12xf32>
  %a, %c = graph.split %y {axis = 1 : i64} : (tensor<4x12xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>)
  return %a, %c : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// A strided window and a bias broadcast along the packed dim (last dim 1):
// the bias stays whole, the weight takes every other column.

// CHECK-LABEL: func.func @strided_broadcast_bias
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x6xf32>, %[[B:.*]]: tensor<4x1xf32>)
// CHECK: %[[W0:.*]] = graph.slice %[[W]] {limits = array<i64: 8, 6>, starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : tensor<8x6xf32> -> tensor<8x3xf32>
// CHECK: %[[M:.*]] = graph.matmul %[[X]], %[[W0]]
// CHECK: %[[Y:.*]] = graph.sub %[[M]], %[[B]] : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: return %[[Y]]
func.func @strided_broadcast_bias(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y = graph.sub %m, %b : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %s = graph.slice %y {starts = array<i64: 0, 1>, limits = array<i64: 4, 6>, steps = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// The packed activation has another user: nothing changes.

// CHECK-LABEL: func.func @packed_value_used_whole
// CHECK: %[[M:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: graph.slice %[[M]]
// CHECK: graph.relu %[[M]]
// CHECK-NOT: graph.matmul
func.func @packed_value_used_whole(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> (tensor<4x4xf32>, tensor<4x12xf32>) {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %s = graph.slice %m {starts = array<i64: 0, 0>, limits = array<i64: 4, 4>, steps = array<i64: 1, 1>} : tensor<4x12xf32> -> tensor<4x4xf32>
  %r = graph.relu %m : tensor<4x12xf32>
  return %s, %r : tensor<4x4xf32>, tensor<4x12xf32>
}

// -----

// A slice of rows (not the packed dim) is not a projection slice.

// CHECK-LABEL: func.func @rows_not_columns
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: graph.slice %{{.*}} : tensor<4x12xf32> -> tensor<2x12xf32>
func.func @rows_not_columns(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> tensor<2x12xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %s = graph.slice %m {starts = array<i64: 0, 0>, limits = array<i64: 2, 12>, steps = array<i64: 1, 1>} : tensor<4x12xf32> -> tensor<2x12xf32>
  return %s : tensor<2x12xf32>
}

// -----

// The bias add has a second user besides the slices' producer chain: the
// chain below the packed value must have one use, so nothing changes.

// CHECK-LABEL: func.func @matmul_used_twice
// CHECK: %[[M:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: %[[Y:.*]] = graph.add %[[M]], %{{.*}}
// CHECK: graph.slice %[[Y]]
// CHECK: return
func.func @matmul_used_twice(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>, %b: tensor<12xf32>) -> (tensor<4x4xf32>, tensor<4x12xf32>) {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %y = graph.add %m, %b : (tensor<4x12xf32>, tensor<12xf32>) -> tensor<4x12xf32>
  %s = graph.slice %y {starts = array<i64: 0, 0>, limits = array<i64: 4, 4>, steps = array<i64: 1, 1>} : tensor<4x12xf32> -> tensor<4x4xf32>
  return %s, %m : tensor<4x4xf32>, tensor<4x12xf32>
}

// -----

// torch 2.x's nn.MultiheadAttention: the packed activation is reshaped to
// [S, B, 3, E], unsqueezed, transposed to bring the 3 to the front, squeezed
// and gathered at 0, 1, 2. Gather i is the slice [i·E, (i+1)·E) of the
// packed columns, so it becomes the same matmul as that slice; the view
// chain, the gathers and their indices go.

// CHECK-LABEL: func.func @torch2_packed_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<16x2x32xf32>, %[[W:.*]]: tensor<96x32xf32>, %[[B:.*]]: tensor<96xf32>)
// CHECK-NOT: graph.gather
// CHECK: %[[BQ:.*]] = graph.slice %[[B]] {limits = array<i64: 32>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<96xf32> -> tensor<32xf32>
// CHECK: %[[WQ:.*]] = graph.slice %[[W]] {limits = array<i64: 32, 32>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<96x32xf32> -> tensor<32x32xf32>
// CHECK: %[[WQT:.*]] = graph.transpose %[[WQ]] {perm = array<i64: 1, 0>}
// CHECK: %[[MQ:.*]] = graph.matmul %[[X]], %[[WQT]] : (tensor<16x2x32xf32>, tensor<32x32xf32>) -> tensor<16x2x32xf32>
// CHECK: %[[Q:.*]] = graph.add %[[BQ]], %[[MQ]]
// CHECK: %[[BK:.*]] = graph.slice %[[B]] {limits = array<i64: 64>, starts = array<i64: 32>
// CHECK: %[[WK:.*]] = graph.slice %[[W]] {limits = array<i64: 64, 32>, starts = array<i64: 32, 0>
// CHECK: %[[WKT:.*]] = graph.transpose %[[WK]]
// CHECK: %[[MK:.*]] = graph.matmul %[[X]], %[[WKT]]
// CHECK: %[[K:.*]] = graph.add %[[BK]], %[[MK]]
// CHECK: %[[BV:.*]] = graph.slice %[[B]] {limits = array<i64: 96>, starts = array<i64: 64>
// CHECK: %[[WV:.*]] = graph.slice %[[W]] {limits = array<i64: 96, 32>, starts = array<i64: 64, 0>
// CHECK: %[[WVT:.*]] = graph.transpose %[[WV]]
// CHECK: %[[MV:.*]] = graph.matmul %[[X]], %[[WVT]]
// CHECK: %[[V:.*]] = graph.add %[[BV]], %[[MV]]
// CHECK-NOT: graph.gather
// CHECK-NOT: graph.reshape
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @torch2_packed_qkv(%x: tensor<16x2x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>) -> (tensor<16x2x32xf32>, tensor<16x2x32xf32>, tensor<16x2x32xf32>) {
  %i0 = graph.constant dense<0> : tensor<i64> : tensor<i64>
  %i1 = graph.constant dense<1> : tensor<i64> : tensor<i64>
  %i2 = graph.constant dense<2> : tensor<i64> : tensor<i64>
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<96x32xf32> -> tensor<32x96xf32>
  %p = graph.matmul %x, %wt : (tensor<16x2x32xf32>, tensor<32x96xf32>) -> tensor<16x2x96xf32>
  %pb = graph.add %b, %p : (tensor<96xf32>, tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %r0 = graph.reshape %pb : tensor<16x2x96xf32> -> tensor<16x2x3x32xf32>
  %r1 = graph.reshape %r0 : tensor<16x2x3x32xf32> -> tensor<1x16x2x3x32xf32>
  %t = graph.transpose %r1 {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x16x2x3x32xf32> -> tensor<3x16x2x1x32xf32>
  %r2 = graph.reshape %t : tensor<3x16x2x1x32xf32> -> tensor<3x16x2x32xf32>
  %q = graph.gather %r2, %i0 {axis = 0 : i64} : (tensor<3x16x2x32xf32>, tensor<i64>) -> tensor<16x2x32xf32>
  %k = graph.gather %r2, %i1 {axis = 0 : i64} : (tensor<3x16x2x32xf32>, tensor<i64>) -> tensor<16x2x32xf32>
  %v = graph.gather %r2, %i2 {axis = 0 : i64} : (tensor<3x16x2x32xf32>, tensor<i64>) -> tensor<16x2x32xf32>
  return %q, %k, %v : tensor<16x2x32xf32>, tensor<16x2x32xf32>, tensor<16x2x32xf32>
}

// -----

// Picks through another chain (the split dim moved to the front by one
// transpose): a negative index counts from the end, and a one-element index
// of rank 1 keeps a size-1 dim, restored by a reshape of the projection.
// Only two of the three pieces are used.

// CHECK-LABEL: func.func @picks_negative_and_rank1_index
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x12xf32>)
// CHECK: %[[W2:.*]] = graph.slice %[[W]] {limits = array<i64: 8, 12>, starts = array<i64: 0, 8>, steps = array<i64: 1, 1>} : tensor<8x12xf32> -> tensor<8x4xf32>
// CHECK: %[[L:.*]] = graph.matmul %[[X]], %[[W2]] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[W0:.*]] = graph.slice %[[W]] {limits = array<i64: 8, 4>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x12xf32> -> tensor<8x4xf32>
// CHECK: %[[M0:.*]] = graph.matmul %[[X]], %[[W0]] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[F:.*]] = graph.reshape %[[M0]] : tensor<4x4xf32> -> tensor<1x4x4xf32>
// CHECK-NOT: graph.gather
// CHECK: return %[[L]], %[[F]]
func.func @picks_negative_and_rank1_index(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> (tensor<4x4xf32>, tensor<1x4x4xf32>) {
  %last = graph.constant dense<-1> : tensor<i64> : tensor<i64>
  %first = graph.constant dense<[0]> : tensor<1xi32> : tensor<1xi32>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %m : tensor<4x12xf32> -> tensor<4x3x4xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<4x3x4xf32> -> tensor<3x4x4xf32>
  %l = graph.gather %t, %last {axis = 0 : i64} : (tensor<3x4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
  %f = graph.gather %t, %first {axis = 0 : i64} : (tensor<3x4x4xf32>, tensor<1xi32>) -> tensor<1x4x4xf32>
  return %l, %f : tensor<4x4xf32>, tensor<1x4x4xf32>
}

// -----

// Chains the pass must not touch. The transpose also swaps S and B, so a
// pick is a transposed slice, not a slice.

// CHECK-LABEL: func.func @pick_transposed_rows
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<16x2x32xf32>, tensor<32x96xf32>) -> tensor<16x2x96xf32>
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 3, 2, 1, 0, 4>}
// CHECK: graph.gather
// CHECK-NOT: graph.matmul
func.func @pick_transposed_rows(%x: tensor<16x2x32xf32>, %w: tensor<32x96xf32>) -> tensor<2x16x32xf32> {
  %i0 = graph.constant dense<0> : tensor<i64> : tensor<i64>
  %p = graph.matmul %x, %w : (tensor<16x2x32xf32>, tensor<32x96xf32>) -> tensor<16x2x96xf32>
  %r0 = graph.reshape %p : tensor<16x2x96xf32> -> tensor<16x2x3x32xf32>
  %r1 = graph.reshape %r0 : tensor<16x2x3x32xf32> -> tensor<1x16x2x3x32xf32>
  %t = graph.transpose %r1 {perm = array<i64: 3, 2, 1, 0, 4>} : tensor<1x16x2x3x32xf32> -> tensor<3x2x16x1x32xf32>
  %r2 = graph.reshape %t : tensor<3x2x16x1x32xf32> -> tensor<3x2x16x32xf32>
  %q = graph.gather %r2, %i0 {axis = 0 : i64} : (tensor<3x2x16x32xf32>, tensor<i64>) -> tensor<2x16x32xf32>
  return %q : tensor<2x16x32xf32>
}

// -----

// The index is not a constant.

// CHECK-LABEL: func.func @pick_index_not_constant
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: graph.gather
// CHECK-NOT: graph.matmul
func.func @pick_index_not_constant(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>, %i: tensor<i64>) -> tensor<4x4xf32> {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %m : tensor<4x12xf32> -> tensor<4x3x4xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<4x3x4xf32> -> tensor<3x4x4xf32>
  %g = graph.gather %t, %i {axis = 0 : i64} : (tensor<3x4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// -----

// A view of the packed value is also used whole (returned): nothing changes,
// not even the picks, since the packed matmul stays.

// CHECK-LABEL: func.func @packed_view_used_whole
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK-COUNT-2: graph.gather
// CHECK-NOT: graph.matmul
func.func @packed_view_used_whole(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x4x4xf32>) {
  %i0 = graph.constant dense<0> : tensor<i64> : tensor<i64>
  %i1 = graph.constant dense<1> : tensor<i64> : tensor<i64>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %m : tensor<4x12xf32> -> tensor<4x3x4xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<4x3x4xf32> -> tensor<3x4x4xf32>
  %a = graph.gather %t, %i0 {axis = 0 : i64} : (tensor<3x4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
  %b = graph.gather %t, %i1 {axis = 0 : i64} : (tensor<3x4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
  return %a, %b, %t : tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x4x4xf32>
}

// -----

// The reshape merges rows with the packed dim ([4, 12] -> [2, 3, 8]): the
// 3 it gathers along is not a split of the packed dim alone.

// CHECK-LABEL: func.func @pick_after_merge
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: graph.reshape %{{.*}} : tensor<4x12xf32> -> tensor<2x3x8xf32>
// CHECK: graph.gather
// CHECK-NOT: graph.matmul
func.func @pick_after_merge(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> tensor<2x8xf32> {
  %i1 = graph.constant dense<1> : tensor<i64> : tensor<i64>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %m : tensor<4x12xf32> -> tensor<2x3x8xf32>
  %g = graph.gather %r, %i1 {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<i64>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// The second reshape reinterprets [4, 3, 4] as [3, 4, 4] rather than
// inserting or dropping size-1 dims: its 4s are not the rows and columns.

// CHECK-LABEL: func.func @pick_after_reinterpreting_reshape
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK: graph.reshape %{{.*}} : tensor<4x3x4xf32> -> tensor<3x4x4xf32>
// CHECK: graph.gather
// CHECK-NOT: graph.matmul
func.func @pick_after_reinterpreting_reshape(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> tensor<3x4xf32> {
  %i1 = graph.constant dense<1> : tensor<i64> : tensor<i64>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %m : tensor<4x12xf32> -> tensor<4x3x4xf32>
  %s = graph.reshape %r : tensor<4x3x4xf32> -> tensor<3x4x4xf32>
  %g = graph.gather %s, %i1 {axis = 1 : i64} : (tensor<3x4x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %g : tensor<3x4xf32>
}
