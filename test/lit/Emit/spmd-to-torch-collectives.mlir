// weft-translate --spmd-to-torch on a hand-written plan with every
// collective (docs/Emit.md, "The emitted program, op by op"): spmd.shard,
// spmd.all_gather in both modes, spmd.reduce_scatter, spmd.all_reduce of a
// sum and of a max (reduce_max.split-reduced), spmd.all_to_all, and two
// ZeRO-3 parameters gathered before use: one over the node axis, one over
// both axes as a chain of two all-gathers (minor axis first), which is one
// p.gathered call so that the backward regathers the whole parameter. The
// mesh has two device classes; segment 0 is uneven with an empty shard.
//
// RUN: weft-translate --spmd-to-torch %s -o %t.py
// RUN: FileCheck %s < %t.py
// RUN: %syspython -m py_compile %t.py
//
// The same with the model's input names (--graph):
// RUN: weft-translate --spmd-to-torch %s --graph %S/Inputs/spmd-to-torch-collectives-model.mlir | FileCheck %s --check-prefix=NAMED
//
// spmd-to-torch-run.test runs the program against weft-run.

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 6, ratios = [0.25, 0.25], sizes = [3, 2, 1, 0]>,
    #spmd.segment<id = 1, extent = 4, ratios = [0.25, 0.25], sizes = [1, 1, 1, 1]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<6x4xf32> {spmd.dist = #spmd.dist<[id, id]>}) -> tensor<f32> {
    %w0 = spmd.parameter "w" {strategy = #spmd.strategy<zero3>} : tensor<4x4xf32> -> #spmd.dist<[gather(0, 1), id]>
    %w = spmd.all_gather %w0 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<4x4xf32> -> #spmd.dist<[id, id]>
    %u0 = spmd.parameter "u" {strategy = #spmd.strategy<zero3>} : tensor<4x4xf32> -> #spmd.dist<[gather(1, 1), gather(1, 1)]>
    %u1 = spmd.all_gather %u0 {axis = 1 : i64, mode = #spmd.gather_mode<grouped>} : tensor<4x4xf32> -> #spmd.dist<[gather(1, 1), id]>
    %u = spmd.all_gather %u1 {axis = 0 : i64, mode = #spmd.gather_mode<grouped>} : tensor<4x4xf32> -> #spmd.dist<[id, id]>
    %a = spmd.shard %x {axis = 1 : i64} : tensor<6x4xf32> -> #spmd.dist<[id, gather(1, 1)]>
    %b = spmd.all_to_all %a {axis = 1 : i64} : tensor<6x4xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %c = spmd.local(%b, %w) {variant = "matmul.replicate, matmul.split-rows", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%p: tensor<6x4xf32>, %q: tensor<4x4xf32>):
      %v = graph.matmul %p, %q : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
      spmd.yield %v : tensor<6x4xf32>
    }
    %d = spmd.all_gather %c {axis = 1 : i64, mode = #spmd.gather_mode<padded>} : tensor<6x4xf32> -> #spmd.dist<[id, id]>
    %e = spmd.shard %d {axis = 0 : i64} : tensor<6x4xf32> -> #spmd.dist<[gather(0, 0), id]>
    %f = spmd.all_gather %e {axis = 0 : i64, mode = #spmd.gather_mode<grouped>} : tensor<6x4xf32> -> #spmd.dist<[id, id]>
    %f2 = spmd.local(%f, %u) {variant = "matmul.replicate, matmul.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%p: tensor<6x4xf32>, %q: tensor<4x4xf32>):
      %v = graph.matmul %p, %q : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
      spmd.yield %v : tensor<6x4xf32>
    }
    %g0 = spmd.shard %f2 {axis = 1 : i64} : tensor<6x4xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %g = spmd.local(%g0) {variant = "reduce_sum.replicate, reduce_sum.split-reduced", dists = [#spmd.dist<[id, sum]>]} : (tensor<6x4xf32>) -> tensor<1x4xf32> {
    ^bb0(%p: tensor<6x4xf32>):
      %v = graph.reduce_sum %p {axes = array<i64: 0>, keepdims = true} : tensor<6x4xf32> -> tensor<1x4xf32>
      spmd.yield %v : tensor<1x4xf32>
    }
    %h = spmd.reduce_scatter %g {axis = 1 : i64} : tensor<1x4xf32> -> #spmd.dist<[id, gather(1, 1)]>
    %m = spmd.local(%h) {variant = "reduce_max.replicate, reduce_max.split-reduced", dists = [#spmd.dist<[id, max]>]} : (tensor<1x4xf32>) -> tensor<f32> {
    ^bb0(%p: tensor<1x4xf32>):
      %v = graph.reduce_max %p {axes = array<i64: 0, 1>, keepdims = false} : tensor<1x4xf32> -> tensor<f32>
      spmd.yield %v : tensor<f32>
    }
    %n = spmd.all_reduce %m {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    %s = spmd.local(%h) {variant = "reduce_sum.replicate, reduce_sum.split-reduced", dists = [#spmd.dist<[id, sum]>]} : (tensor<1x4xf32>) -> tensor<f32> {
    ^bb0(%p: tensor<1x4xf32>):
      %v = graph.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : tensor<1x4xf32> -> tensor<f32>
      spmd.yield %v : tensor<f32>
    }
    %t = spmd.all_reduce %s {axis = 1 : i64, algorithm = #spmd.algorithm<hierarchical>} : tensor<f32> -> #spmd.dist<[id, id]>
    %l = spmd.local(%t, %n) {variant = "add.replicate, add.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<f32>, tensor<f32>) -> tensor<f32> {
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %v = graph.add %p, %q : (tensor<f32>, tensor<f32>) -> tensor<f32>
      spmd.yield %v : tensor<f32>
    }
    return %l : tensor<f32>
  }
}

// CHECK:      Mesh 2x2 (4 devices), 6 local ops, 12 collectives, 2 parameters, 1 micro-batch(es).
// CHECK:      MESH = Mesh(2, (2,), [DeviceClass("V100", (0,)),
// CHECK-NEXT:     DeviceClass("P100", (1,))])
// CHECK-NEXT: SEGMENTS = {0: [3, 2, 1, 0],
// CHECK-NEXT:             1: [1, 1, 1, 1]}
// CHECK-NEXT: FINGERPRINT = "spmd-to-torch-collectives.mlir"
// CHECK-NEXT: MICRO_BATCHES = 1

// Every distribution the program names, once, in order of first use.
// CHECK:      D0 = "[id, id]"
// CHECK-NEXT: D1 = "[gather(0, 1), id]"
// CHECK-NEXT: D2 = "[gather(1, 1), gather(1, 1)]"
// CHECK-NEXT: D3 = "[id, gather(1, 1)]"
// CHECK-NEXT: D4 = "[id, gather(0, 0)]"
// CHECK-NEXT: D5 = "[gather(0, 0), id]"
// CHECK-NEXT: D6 = "[id, max]"
// CHECK-NEXT: D7 = "[id, sum]"
// CHECK-EMPTY:
// CHECK-NEXT: INPUTS = [
// CHECK-NEXT:     InputSpec("arg0", (6, 4), "f32", D0),
// CHECK-NEXT: ]
// CHECK-NEXT: PARAMETERS = [
// CHECK-NEXT:     ParamSpec("w", (4, 4), "f32", D1, "zero3", init="normal"),
// CHECK-NEXT:     ParamSpec("u", (4, 4), "f32", D2, "zero3", init="normal"),
// CHECK-NEXT: ]

// CHECK:      def forward(rt, p, arg0):
// CHECK:          v0 = p["w"]
// CHECK-NEXT:     v1 = p.gathered("w", (4, 4), D1, (0,), "padded")
// CHECK-NEXT:     v2 = p["u"]
// CHECK-NEXT:     v3 = p.gathered("u", (4, 4), D2, (1, 0), "grouped")
// CHECK-NEXT:     v4 = rt.shard(arg0, (6, 4), D3, 1)
// CHECK-NEXT:     v5 = rt.all_to_all(v4, (6, 4), D3, D4, 1)
// CHECK-NEXT:     v6 = ops.matmul(v5, v1)  # matmul.replicate, matmul.split-rows
// CHECK-NEXT:     v7 = rt.all_gather(v6, (6, 4), D4, 1, "padded")
// CHECK-NEXT:     v8 = rt.shard(v7, (6, 4), D5, 0)
// CHECK-NEXT:     v9 = rt.all_gather(v8, (6, 4), D5, 0, "grouped")
// CHECK-NEXT:     v10 = ops.matmul(v9, v3)  # matmul.replicate, matmul.replicate
// CHECK-NEXT:     v11 = rt.shard(v10, (6, 4), D4, 1)
// CHECK-NEXT:     v12 = ops.reduce_sum(v11, axes=(0,), keepdims=True)  # reduce_sum.replicate, reduce_sum.split-reduced
// CHECK-NEXT:     v13 = rt.reduce_scatter(v12, (1, 4), D3, 1)
// CHECK-NEXT:     v14 = ops.reduce_max(v13, axes=(0, 1), keepdims=False)  # reduce_max.replicate, reduce_max.split-reduced
// CHECK-NEXT:     v15 = rt.all_reduce(v14, D6, 1)
// CHECK-NEXT:     v16 = ops.reduce_sum(v13, axes=(0, 1), keepdims=False)  # reduce_sum.replicate, reduce_sum.split-reduced
// CHECK-NEXT:     v17 = rt.all_reduce(v16, D7, 1)
// CHECK-NEXT:     v18 = ops.add(v17, v15)  # add.replicate, add.replicate
// CHECK-NEXT:     return v18
// CHECK-NOT:  rt.all_gather
// CHECK:      PLAN = Plan(MESH, SEGMENTS, INPUTS, PARAMETERS, forward, loss_dist=D0,
// CHECK-NEXT:             micro_batches=MICRO_BATCHES, fingerprint=FINGERPRINT,
// CHECK-NEXT:             axis_sets=[])
// CHECK:      if __name__ == "__main__":
// CHECK-NEXT:     main(PLAN)

// NAMED:      InputSpec("x", (6, 4), "f32", D0),
// NAMED:      def forward(rt, p, x):
// NAMED:          v4 = rt.shard(x, (6, 4), D3, 1)
