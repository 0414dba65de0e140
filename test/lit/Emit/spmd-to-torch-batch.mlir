// weft-translate --spmd-to-torch on a hand-written data-parallel plan (batch
// split 3 | 1) with two micro-batches: a constant sharded by the plan and a
// splat one, a convolution, batch_norm with statistics synchronised over
// the batch split and a relu recomputed together in the backward pass,
// pooling, flatten, split and concat (local shapes), a slice of a split
// input (its box), cross_entropy over the split batch with ignore_index,
// reduce_mean over a split dim, ZeRO-1 and ZeRO-2 parameters and buffers.
//
// RUN: weft-translate --spmd-to-torch %s -o %t.py
// RUN: FileCheck %s < %t.py
// RUN: %syspython -m py_compile %t.py
//
// spmd-to-torch-run.test runs the program against weft-run with the model
// Inputs/spmd-to-torch-batch-model.mlir.

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "CPU", peak_gflops = 100, memory_mb = 4000, nodes = [0]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [3, 1]>],
  spmd.micro_batches = 2 : i64,
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x3x4x4xf32> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>},
                  %y: tensor<4xi64> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>}) -> tensor<f32> {
    %cw = spmd.parameter "conv.weight" {strategy = #spmd.strategy<zero2>} : tensor<5x3x3x3xf32> -> #spmd.dist<[id, id]>
    %cb = spmd.parameter "conv.bias" {strategy = #spmd.strategy<zero1>} : tensor<5xf32> -> #spmd.dist<[id, id]>
    %bw = spmd.parameter "bn.weight" {strategy = #spmd.strategy<replicated>} : tensor<5xf32> -> #spmd.dist<[id, id]>
    %bb = spmd.parameter "bn.bias" {strategy = #spmd.strategy<replicated>} : tensor<5xf32> -> #spmd.dist<[id, id]>
    %bm = spmd.parameter "bn.running_mean" {strategy = #spmd.strategy<buffer>} : tensor<5xf32> -> #spmd.dist<[id, id]>
    %bv = spmd.parameter "bn.running_var" {strategy = #spmd.strategy<buffer>} : tensor<5xf32> -> #spmd.dist<[id, id]>
    %fw = spmd.parameter "fc.weight" {strategy = #spmd.strategy<replicated>} : tensor<5x6xf32> -> #spmd.dist<[id, id]>
    %k = spmd.local() {variant = "constant.replicate, constant.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : () -> tensor<4x5xf32> {
      %v = graph.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 0.25, 0.125, 1.0, 2.0], [-1.0, -2.0, 0.0, 1.0, 2.0], [3.0, 1.0, 4.0, 1.0, 5.0]]> : tensor<4x5xf32> : tensor<4x5xf32> loc("scale")
      spmd.yield %v : tensor<4x5xf32>
    }
    %c = spmd.local(%x, %cw, %cb) {variant = "conv2d.replicate, conv2d.split-batch", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32> {
    ^bb0(%a: tensor<4x3x4x4xf32>, %p: tensor<5x3x3x3xf32>, %q: tensor<5xf32>):
      %v = graph.conv2d %a, %p, %q {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<4x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32> loc("conv")
      spmd.yield %v : tensor<4x5x4x4xf32>
    }
    %n = spmd.local(%c, %bw, %bb, %bm, %bv) {variant = "batch_norm.replicate, batch_norm.split-batch-sync-stats", dists = [#spmd.dist<[id, gather(0, 0)]>], recompute} : (tensor<4x5x4x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32> {
    ^bb0(%a: tensor<4x5x4x4xf32>, %p: tensor<5xf32>, %q: tensor<5xf32>, %m: tensor<5xf32>, %s: tensor<5xf32>):
      %v = graph.batch_norm %a, %p, %q, %m, %s {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<4x5x4x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<4x5x4x4xf32> loc("bn")
      spmd.yield %v : tensor<4x5x4x4xf32>
    }
    %r = spmd.local(%n) {variant = "relu.replicate, relu.split", dists = [#spmd.dist<[id, gather(0, 0)]>], recompute} : (tensor<4x5x4x4xf32>) -> tensor<4x5x4x4xf32> {
    ^bb0(%a: tensor<4x5x4x4xf32>):
      %v = graph.relu %a : tensor<4x5x4x4xf32> loc("relu")
      spmd.yield %v : tensor<4x5x4x4xf32>
    }
    %p = spmd.local(%r) {variant = "global_avg_pool.replicate, global_avg_pool.split-batch", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5x4x4xf32>) -> tensor<4x5x1x1xf32> {
    ^bb0(%a: tensor<4x5x4x4xf32>):
      %v = graph.global_avg_pool %a : tensor<4x5x4x4xf32> -> tensor<4x5x1x1xf32> loc("gap")
      spmd.yield %v : tensor<4x5x1x1xf32>
    }
    %f = spmd.local(%p) {variant = "flatten.replicate, flatten.split-group", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5x1x1xf32>) -> tensor<4x5xf32> {
    ^bb0(%a: tensor<4x5x1x1xf32>):
      %v = graph.flatten %a {axis = 1 : i64} : tensor<4x5x1x1xf32> -> tensor<4x5xf32> loc("flatten")
      spmd.yield %v : tensor<4x5xf32>
    }
    %m = spmd.local(%f, %k) {variant = "mul.replicate, mul.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32> {
    ^bb0(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>):
      %v = graph.mul %a, %b : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32> loc("scaled")
      spmd.yield %v : tensor<4x5xf32>
    }
    %half = spmd.local() {variant = "constant.replicate, constant.replicate", dists = [#spmd.dist<[id, id]>]} : () -> tensor<5xf32> {
      %v = graph.constant dense<0.5> : tensor<5xf32> : tensor<5xf32> loc("half")
      spmd.yield %v : tensor<5xf32>
    }
    %mh = spmd.local(%m, %half) {variant = "mul.replicate, mul.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> {
    ^bb0(%a: tensor<4x5xf32>, %b: tensor<5xf32>):
      %v = graph.mul %a, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc("halved")
      spmd.yield %v : tensor<4x5xf32>
    }
    %sa, %sb = spmd.local(%mh) {variant = "split.replicate, split.split", dists = [#spmd.dist<[id, gather(0, 0)]>, #spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>) {
    ^bb0(%a: tensor<4x5xf32>):
      %u, %v = graph.split %a {axis = 1 : i64} : (tensor<4x5xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>) loc("halves")
      spmd.yield %u, %v : tensor<4x2xf32>, tensor<4x3xf32>
    }
    %cc = spmd.local(%sb, %sa) {variant = "concat.replicate, concat.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32> {
    ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>):
      %v = graph.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32> loc("swapped")
      spmd.yield %v : tensor<4x5xf32>
    }
    %h = spmd.local(%cc, %fw) {variant = "matmul.replicate, matmul.split-rows", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32> {
    ^bb0(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>):
      %v = graph.matmul %a, %b : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32> loc("fc")
      spmd.yield %v : tensor<4x6xf32>
    }
    %sl = spmd.local(%h) {variant = "slice.replicate, slice.split", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x6xf32>) -> tensor<4x3xf32> {
    ^bb0(%a: tensor<4x6xf32>):
      %v = graph.slice %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 6>, steps = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x3xf32> loc("even")
      spmd.yield %v : tensor<4x3xf32>
    }
    %l0 = spmd.local(%sl, %y) {variant = "cross_entropy.replicate, cross_entropy.split-batch", dists = [#spmd.dist<[id, sum]>]} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<4x3xf32>, %b: tensor<4xi64>):
      %v = graph.cross_entropy %a, %b {ignore_index = 2 : i64, reduction = "mean"} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> loc("loss")
      spmd.yield %v : tensor<f32>
    }
    %q = spmd.local(%cc) {variant = "reduce_mean.replicate, reduce_mean.split-reduced", dists = [#spmd.dist<[id, sum]>]} : (tensor<4x5xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x5xf32>):
      %v = graph.reduce_mean %a {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x5xf32> -> tensor<f32> loc("mean")
      spmd.yield %v : tensor<f32>
    }
    %l1 = spmd.local(%l0, %q) {variant = "add.replicate, add.partial", dists = [#spmd.dist<[id, sum]>]} : (tensor<f32>, tensor<f32>) -> tensor<f32> {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %v = graph.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("total")
      spmd.yield %v : tensor<f32>
    }
    %l = spmd.all_reduce %l1 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}

// CHECK:      Mesh 1x2 (2 devices), 16 local ops, 1 collectives, 7 parameters, 2 micro-batch(es).
// CHECK:      MICRO_BATCHES = 2

// Constants: the words of a float32 tensor in base64, a splat as its value.
// CHECK:      C0 = Constant("f32", (4, 5), data="AACAPwAAAEAAAEBAAACAQAAAoEAAAAA/AACAPgAAAD4AAIA/AAAAQAAAgL8AAADAAAAAAAAAgD8AAABAAABAQAAAgD8AAIBAAACAPwAAoEA=")
// CHECK-NEXT: C1 = Constant("f32", (5,), fill=0.5)

// The shapes of one micro-batch; the bound of the labels is the class count.
// CHECK:      InputSpec("arg0", (4, 3, 4, 4), "f32", D0),
// CHECK-NEXT: InputSpec("arg1", (4,), "i64", D0, bound=3),
// CHECK:      ParamSpec("conv.weight", (5, 3, 3, 3), "f32", D1, "zero2", init="normal"),
// CHECK-NEXT: ParamSpec("conv.bias", (5,), "f32", D1, "zero1", init="zeros"),
// CHECK-NEXT: ParamSpec("bn.weight", (5,), "f32", D1, "replicated", init="ones"),
// CHECK-NEXT: ParamSpec("bn.bias", (5,), "f32", D1, "replicated", init="zeros"),
// CHECK-NEXT: ParamSpec("bn.running_mean", (5,), "f32", D1, "buffer", init="zeros"),
// CHECK-NEXT: ParamSpec("bn.running_var", (5,), "f32", D1, "buffer", init="ones"),
// CHECK-NEXT: ParamSpec("fc.weight", (5, 6), "f32", D1, "replicated", init="normal"),

// A constant's shard is cut by the runtime, on the rank's device.
// CHECK:      v7 = rt.shard_of(C0.value(rt.device), D0)  # scale constant.replicate, constant.split
// CHECK-NEXT: v8 = ops.conv2d(arg0, v0, v1, dilations=(1, 1), group=1, pads=(1, 1, 1, 1), strides=(1, 1))  # conv conv2d.replicate, conv2d.split-batch

// The recomputed run: a function of its inputs from outside it; the global
// count of each channel's elements is 4 * 4 * 4.
// CHECK-NEXT: def run0(v8, v2, v3, v4, v5):  # recomputed in the backward pass
// CHECK-NEXT:     v9 = R.sync_batch_norm(v8, v2, v3, 1e-05, 64, rt.group((1,)), rt.comm)  # bn batch_norm.replicate, batch_norm.split-batch-sync-stats
// CHECK-NEXT:     v10 = ops.relu(v9)  # relu relu.replicate, relu.split
// CHECK-NEXT:     return v10,
// CHECK-NEXT: v10, = recompute(run0, v8, v2, v3, v4, v5)

// CHECK-NEXT: v11 = ops.global_avg_pool(v10)  # gap global_avg_pool.replicate, global_avg_pool.split-batch
// CHECK-NEXT: v12 = ops.flatten(v11, axis=1, shape=rt.extents((4, 5), D0))  # flatten flatten.replicate, flatten.split-group
// CHECK-NEXT: v13 = ops.mul(v12, v7)  # scaled mul.replicate, mul.split
// CHECK-NEXT: v14 = rt.shard_of(C1.value(rt.device), D1)  # half constant.replicate, constant.replicate
// CHECK-NEXT: v15 = ops.mul(v13, v14)  # halved mul.replicate, mul.split
// CHECK-NEXT: v16, v17 = ops.split(v15, axis=1, shapes=[rt.extents((4, 2), D0), rt.extents((4, 3), D0)])  # halves split.replicate, split.split
// CHECK-NEXT: v18 = ops.concat(v17, v16, axis=1)  # swapped concat.replicate, concat.split
// CHECK-NEXT: v19 = ops.matmul(v18, v6)  # fc matmul.replicate, matmul.split-rows
// CHECK-NEXT: v20 = ops.slice(v19, limits=(4, 6), starts=(0, 0), steps=(1, 2), global_in=(4, 6), global_out=(4, 3), box=rt.box((4, 3), D0))  # even slice.replicate, slice.split

// cross_entropy.split-batch: the count of kept labels over the batch group.
// CHECK-NEXT: v21 = R.cross_entropy(v20, arg1, count=4, reduction="mean", ignore_index=2, from_logits=True, class_group=None, offset=0, first=True, batch_group=rt.group((1,)), comm=rt.comm)  # loss cross_entropy.replicate, cross_entropy.split-batch
// CHECK-NEXT: v22 = R.split_mean(v18, (0, 1), 20, keepdim=False)  # mean reduce_mean.replicate, reduce_mean.split-reduced
// CHECK-NEXT: v23 = ops.add(v21, v22)  # total add.replicate, add.partial
// CHECK-NEXT: v24 = rt.all_reduce(v23, D2, 1)
// CHECK-NEXT: return v24
