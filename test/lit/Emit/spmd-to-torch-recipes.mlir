// weft-translate --spmd-to-torch on a hand-written plan of the recipes that
// talk across a mesh axis or need a global offset (docs/ShardingRules.md;
// lib/Exec/SpmdLocal.cpp marks them): a vocabulary-split embedding, a
// layer_norm normalised over a split dim with a negative axis, dropout keyed
// by global index, softmax and log_softmax over split dims, a reshape of a
// split group, a split contraction whose bias is added once, nll_loss and
// cross_entropy over split classes. Segment 2 leaves device 1 no vocabulary.
//
// RUN: weft-translate --spmd-to-torch %s -o %t.py
// RUN: FileCheck %s < %t.py
// RUN: %syspython -m py_compile %t.py
//
// spmd-to-torch-run.test runs the program against weft-run with the model
// Inputs/spmd-to-torch-recipes-model.mlir.

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "CPU", peak_gflops = 100, memory_mb = 4000, nodes = [0]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [3, 1]>,
    #spmd.segment<id = 1, extent = 6, ratios = [0.5], sizes = [4, 2]>,
    #spmd.segment<id = 2, extent = 8, ratios = [0.5], sizes = [8, 0]>],
  spmd.version = 2 : i64} {
  func.func @main(%ids: tensor<2x3xi64> {spmd.dist = #spmd.dist<[id, id]>},
                  %y: tensor<6xi64> {spmd.dist = #spmd.dist<[id, id]>}) -> tensor<f32> {
    %e = spmd.parameter "embed" {strategy = #spmd.strategy<replicated>} : tensor<8x4xf32> -> #spmd.dist<[id, gather(0, 2)]>
    %g = spmd.parameter "ln.weight" {strategy = #spmd.strategy<replicated>} : tensor<4xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %b = spmd.parameter "ln.bias" {strategy = #spmd.strategy<replicated>} : tensor<4xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %w = spmd.parameter "proj.weight" {strategy = #spmd.strategy<replicated>} : tensor<4x6xf32> -> #spmd.dist<[id, gather(0, 0)]>
    %c = spmd.parameter "proj.bias" {strategy = #spmd.strategy<replicated>} : tensor<6xf32> -> #spmd.dist<[id, id]>
    %x0 = spmd.local(%e, %ids) {variant = "gather.replicate, gather.split-vocab", dists = [#spmd.dist<[id, sum]>], needs_offset} : (tensor<8x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32> {
    ^bb0(%a: tensor<8x4xf32>, %i: tensor<2x3xi64>):
      %v = graph.gather %a, %i {axis = 0 : i64} : (tensor<8x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32> loc("embedding")
      spmd.yield %v : tensor<2x3x4xf32>
    }
    %x = spmd.all_reduce %x0 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<2x3x4xf32> -> #spmd.dist<[id, id]>
    %xs = spmd.shard %x {axis = 1 : i64} : tensor<2x3x4xf32> -> #spmd.dist<[id, gather(2, 0)]>
    %n = spmd.local(%xs, %g, %b) {variant = "layer_norm.replicate, layer_norm.split-normalized", dists = [#spmd.dist<[id, gather(2, 0)]>]} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%a: tensor<2x3x4xf32>, %p: tensor<4xf32>, %q: tensor<4xf32>):
      %v = graph.layer_norm %a, %p, %q {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32> loc("ln")
      spmd.yield %v : tensor<2x3x4xf32>
    }
    %d = spmd.local(%n) {variant = "dropout.replicate, dropout.split", dists = [#spmd.dist<[id, gather(2, 0)]>], needs_offset} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%a: tensor<2x3x4xf32>):
      %v = graph.dropout %a {ratio = 0.1 : f64} : tensor<2x3x4xf32> loc("dropout")
      spmd.yield %v : tensor<2x3x4xf32>
    }
    %s = spmd.local(%d) {variant = "softmax.replicate, softmax.split-reduced", dists = [#spmd.dist<[id, gather(2, 0)]>]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%a: tensor<2x3x4xf32>):
      %v = graph.softmax %a {axis = -1 : i64} : tensor<2x3x4xf32> loc("softmax")
      spmd.yield %v : tensor<2x3x4xf32>
    }
    %r = spmd.local(%s) {variant = "reshape.replicate, reshape.split-group", dists = [#spmd.dist<[id, gather(1, 0)]>]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%a: tensor<2x3x4xf32>):
      %v = graph.reshape %a : tensor<2x3x4xf32> -> tensor<6x4xf32> loc("rows")
      spmd.yield %v : tensor<6x4xf32>
    }
    %h = spmd.local(%r, %w) {variant = "matmul.replicate, matmul.split-contraction", dists = [#spmd.dist<[id, sum]>]} : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32> {
    ^bb0(%a: tensor<6x4xf32>, %p: tensor<4x6xf32>):
      %v = graph.matmul %a, %p : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32> loc("proj")
      spmd.yield %v : tensor<6x6xf32>
    }
    %hb = spmd.local(%h, %c) {variant = "add.replicate, add.partial-once", dists = [#spmd.dist<[id, sum]>]} : (tensor<6x6xf32>, tensor<6xf32>) -> tensor<6x6xf32> {
    ^bb0(%a: tensor<6x6xf32>, %p: tensor<6xf32>):
      %v = graph.add %a, %p : (tensor<6x6xf32>, tensor<6xf32>) -> tensor<6x6xf32> loc("proj.add")
      spmd.yield %v : tensor<6x6xf32>
    }
    %hs = spmd.reduce_scatter %hb {axis = 1 : i64} : tensor<6x6xf32> -> #spmd.dist<[id, gather(1, 1)]>
    %o = spmd.local(%hs) {variant = "log_softmax.replicate, log_softmax.split-reduced", dists = [#spmd.dist<[id, gather(1, 1)]>]} : (tensor<6x6xf32>) -> tensor<6x6xf32> {
    ^bb0(%a: tensor<6x6xf32>):
      %v = graph.log_softmax %a {axis = 1 : i64} : tensor<6x6xf32> loc("log_softmax")
      spmd.yield %v : tensor<6x6xf32>
    }
    %l0 = spmd.local(%o, %y) {variant = "nll_loss.replicate, nll_loss.split-classes", dists = [#spmd.dist<[id, sum]>], needs_offset} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<6x6xf32>, %p: tensor<6xi64>):
      %v = graph.nll_loss %a, %p {reduction = "mean"} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32> loc("nll")
      spmd.yield %v : tensor<f32>
    }
    %l1 = spmd.local(%hs, %y) {variant = "cross_entropy.replicate, cross_entropy.split-classes", dists = [#spmd.dist<[id, sum]>], needs_offset} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<6x6xf32>, %p: tensor<6xi64>):
      %v = graph.cross_entropy %a, %p {reduction = "sum"} : (tensor<6x6xf32>, tensor<6xi64>) -> tensor<f32> loc("xent")
      spmd.yield %v : tensor<f32>
    }
    %l2 = spmd.local(%l0, %l1) {variant = "add.replicate, add.partial", dists = [#spmd.dist<[id, sum]>]} : (tensor<f32>, tensor<f32>) -> tensor<f32> {
    ^bb0(%a: tensor<f32>, %p: tensor<f32>):
      %v = graph.add %a, %p : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("total")
      spmd.yield %v : tensor<f32>
    }
    %l = spmd.all_reduce %l2 {axis = 1 : i64, algorithm = #spmd.algorithm<ring>} : tensor<f32> -> #spmd.dist<[id, id]>
    return %l : tensor<f32>
  }
}

// CHECK:      MESH = Mesh(1, (2,), [DeviceClass("CPU", (0,))])
// CHECK-NEXT: SEGMENTS = {0: [3, 1],
// CHECK-NEXT:             1: [4, 2],
// CHECK-NEXT:             2: [8, 0]}

// The bounds of the integer inputs: the table's rows, the class count.
// CHECK:      InputSpec("arg0", (2, 3), "i64", D0, bound=8),
// CHECK-NEXT: InputSpec("arg1", (6,), "i64", D0, bound=6),

// CHECK:      def forward(rt, p, arg0, arg1):

// gather.split-vocab: the lookup of index - offset on the rank's rows.
// CHECK:      v5 = R.vocab_embedding(v0, arg0, 0, rt.offset((8, 4), D1, 0, axes=(1,)), 8)  # embedding gather.replicate, gather.split-vocab
// CHECK-NEXT: v6 = rt.all_reduce(v5, D3, 1)
// CHECK-NEXT: v7 = rt.shard(v6, (2, 3, 4), D4, 1)

// layer_norm.split-normalized: the axis counted from the front, the global
// count of normalised elements per row.
// CHECK-NEXT: v8 = R.split_layer_norm(v7, v1, v2, 2, 1e-05, 4, rt.group((1,)), rt.comm)  # ln layer_norm.replicate, layer_norm.split-normalized

// dropout: op id 0, the mask keyed by the global index along the split axis.
// CHECK-NEXT: v9 = R.dropout(v8, 0.1, rt.dropout_seed, 0, (2, 3, 4), rt.offsets((2, 3, 4), D4))  # dropout dropout.replicate, dropout.split

// CHECK-NEXT: v10 = R.split_softmax(v9, -1, rt.group((1,)), rt.comm, log=False)  # softmax softmax.replicate, softmax.split-reduced
// CHECK-NEXT: v11 = ops.reshape(v10, shape=rt.extents((6, 4), D5))  # rows reshape.replicate, reshape.split-group
// CHECK-NEXT: v12 = ops.matmul(v11, v3)  # proj matmul.replicate, matmul.split-contraction
// CHECK-NEXT: v13 = ops.add(v12, R.once(v4, rt.first_on((1,))))  # proj.add add.replicate, add.partial-once
// CHECK-NEXT: v14 = rt.reduce_scatter(v13, (6, 6), D6, 1)
// CHECK-NEXT: v15 = R.split_softmax(v14, 1, rt.group((1,)), rt.comm, log=True)  # log_softmax log_softmax.replicate, log_softmax.split-reduced

// The losses over split classes: nll_loss picks targets by owner; the
// log-sum-exp of cross_entropy is added on the first rank of the axis.
// CHECK-NEXT: v16 = R.cross_entropy(v15, arg1, count=6, reduction="mean", ignore_index=None, from_logits=False, class_group=rt.group((1,)), offset=rt.offset((6, 6), D6, 1, axes=(1,)), first=rt.first_on((1,)), batch_group=None, comm=rt.comm)  # nll nll_loss.replicate, nll_loss.split-classes
// CHECK-NEXT: v17 = R.cross_entropy(v14, arg1, count=6, reduction="sum", ignore_index=None, from_logits=True, class_group=rt.group((1,)), offset=rt.offset((6, 6), D6, 1, axes=(1,)), first=rt.first_on((1,)), batch_group=None, comm=rt.comm)  # xent cross_entropy.replicate, cross_entropy.split-classes
// CHECK-NEXT: v18 = ops.add(v16, v17)  # total add.replicate, add.partial
// CHECK-NEXT: v19 = rt.all_reduce(v18, D3, 1)
// CHECK-NEXT: return v19
// CHECK:      axis_sets=[(0, 1)])
