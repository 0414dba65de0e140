// RUN: weft-opt %s | weft-opt | FileCheck %s
// A pipelined plan of two stages (docs/Pipeline.md) round-trips.

// CHECK: spmd.schedule = "1f1b"
// CHECK: module @stage0 attributes {{.*}}spmd.nodes = array<i64: 0>{{.*}}spmd.stage = 0 : i64
// CHECK: spmd.send %{{.*}} {peer = 1 : i64} : tensor<4x8xf32>
// CHECK: module @stage1 attributes {{.*}}spmd.nodes = array<i64: 1>{{.*}}spmd.stage = 1 : i64
// CHECK: spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}
