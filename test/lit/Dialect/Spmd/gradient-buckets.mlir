// The tree all-reduce algorithm and the module's gradient bucket size
// (spmd.gradient_bucket_bytes) parse, verify and print back; a negative or
// non-integer bucket size is rejected.
// RUN: weft-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: module attributes {spmd.gradient_bucket_bytes = 0 : i64
// CHECK: spmd.all_reduce %{{.*}} {algorithm = #spmd.algorithm<tree>, axis = 0 : i64}
module attributes {spmd.gradient_bucket_bytes = 0 : i64,
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 32000, nodes = [0, 1]>]>} {
  func.func @main(%p: tensor<f32> {spmd.dist = #spmd.dist<[sum, id]>}) -> tensor<f32> {
    %r = spmd.all_reduce %p {axis = 0 : i64, algorithm = #spmd.algorithm<tree>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %r : tensor<f32>
  }
}

// -----

// expected-error @+1 {{'spmd.gradient_bucket_bytes' must be a non-negative i64}}
module attributes {spmd.gradient_bucket_bytes = -1 : i64} {
}

// -----

// expected-error @+1 {{'spmd.gradient_bucket_bytes' must be a non-negative i64}}
module attributes {spmd.gradient_bucket_bytes = "25MB"} {
}
