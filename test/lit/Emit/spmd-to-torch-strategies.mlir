// weft-translate --spmd-to-torch: what a program declares before its forward
// pass, on a hand-written plan for 3 nodes (two device classes) of 2 x 1
// local devices with two micro-batches: the mesh, the segments (uneven, with
// empty shards), the distributions, the inputs (integer bounds from an
// embedding table and from a loss's class count through a reshape; a
// boolean input has none) and every parameter strategy with the seeded
// initial value lib/Exec gives its role (a layer_norm or batch_norm scale
// and a running variance are ones, biases and running means zeros, weights
// normal).
//
// RUN: weft-translate --spmd-to-torch %s -o %t.py
// RUN: FileCheck %s < %t.py
// RUN: %syspython -m py_compile %t.py
//
// With the model (--graph): its input names, as identifiers that do not
// stand for anything else in the forward function (p, rt, ops, R, v<k>,
// D<k>, C<k> and run<k> are the emitter's).
// RUN: weft-translate --spmd-to-torch %s --graph %S/Inputs/spmd-to-torch-strategies-model.mlir -o %t.named.py
// RUN: FileCheck %s --check-prefix=NAMED < %t.named.py
// RUN: %syspython -m py_compile %t.named.py

module attributes {
  spmd.fingerprint = "sha256:2ba643e6a56ebff49224c7e51f2160956c0138b745bcccc5f440399f734bcf6a",
  spmd.mesh = #spmd.mesh<local = [2, 1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 2]>,
    #spmd.device_class<type = "T4", peak_gflops = 8100, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [
    #spmd.segment<id = 0, extent = 5, ratios = [0.2, 0.1], sizes = [1, 1, 1, 0, 2, 0]>],
  spmd.micro_batches = 2 : i64,
  spmd.version = 2 : i64} {
  func.func @main(%ids: tensor<4x3xi64> {spmd.dist = #spmd.dist<[id, id, id]>},
                  %y: tensor<4x3xi64> {spmd.dist = #spmd.dist<[id, id, id]>},
                  %keep: tensor<12x5xi1> {spmd.dist = #spmd.dist<[id, id, id]>}) -> tensor<f32> {
    %e = spmd.parameter "emb" {strategy = #spmd.strategy<replicated>} : tensor<10x8xf32> -> #spmd.dist<[id, id, id]>
    %g = spmd.parameter "ln.weight" {strategy = #spmd.strategy<zero1>} : tensor<8xf32> -> #spmd.dist<[id, id, id]>
    %b = spmd.parameter "ln.bias" {strategy = #spmd.strategy<zero2>} : tensor<8xf32> -> #spmd.dist<[id, id, id]>
    %bw = spmd.parameter "bn.weight" {strategy = #spmd.strategy<replicated>} : tensor<3xf32> -> #spmd.dist<[id, id, id]>
    %bb = spmd.parameter "bn.bias" {strategy = #spmd.strategy<replicated>} : tensor<3xf32> -> #spmd.dist<[id, id, id]>
    %bm = spmd.parameter "bn.running_mean" {strategy = #spmd.strategy<buffer>} : tensor<3xf32> -> #spmd.dist<[id, id, id]>
    %bv = spmd.parameter "bn.running_var" {strategy = #spmd.strategy<buffer>} : tensor<3xf32> -> #spmd.dist<[id, id, id]>
    %w0 = spmd.parameter "fc.weight" {strategy = #spmd.strategy<zero3>} : tensor<8x5xf32> -> #spmd.dist<[gather(1, 0), id, id]>
    %w = spmd.all_gather %w0 {axis = 0 : i64, mode = #spmd.gather_mode<padded>} : tensor<8x5xf32> -> #spmd.dist<[id, id, id]>
    %fb = spmd.parameter "fc.bias" {strategy = #spmd.strategy<replicated>} : tensor<5xf32> -> #spmd.dist<[id, id, id]>
    %x = spmd.local(%e, %ids) {variant = "gather.replicate, gather.replicate, gather.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<10x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32> {
    ^bb0(%a: tensor<10x8xf32>, %i: tensor<4x3xi64>):
      %v = graph.gather %a, %i {axis = 0 : i64} : (tensor<10x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
      spmd.yield %v : tensor<4x3x8xf32>
    }
    %n = spmd.local(%x, %g, %b) {variant = "layer_norm.replicate, layer_norm.replicate, layer_norm.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x3x8xf32> {
    ^bb0(%a: tensor<4x3x8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>):
      %v = graph.layer_norm %a, %c, %d {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x3x8xf32>
      spmd.yield %v : tensor<4x3x8xf32>
    }
    %bn = spmd.local(%n, %bw, %bb, %bm, %bv) {variant = "batch_norm.replicate, batch_norm.replicate, batch_norm.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<4x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x8xf32> {
    ^bb0(%a: tensor<4x3x8xf32>, %c: tensor<3xf32>, %d: tensor<3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>):
      %v = graph.batch_norm %a, %c, %d, %m, %s {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64, training = false} : (tensor<4x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x8xf32>
      spmd.yield %v : tensor<4x3x8xf32>
    }
    %r = spmd.local(%bn) {variant = "reshape.replicate, reshape.replicate, reshape.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<4x3x8xf32>) -> tensor<12x8xf32> {
    ^bb0(%a: tensor<4x3x8xf32>):
      %v = graph.reshape %a : tensor<4x3x8xf32> -> tensor<12x8xf32>
      spmd.yield %v : tensor<12x8xf32>
    }
    %h = spmd.local(%r, %w) {variant = "matmul.replicate, matmul.replicate, matmul.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<12x8xf32>, tensor<8x5xf32>) -> tensor<12x5xf32> {
    ^bb0(%a: tensor<12x8xf32>, %c: tensor<8x5xf32>):
      %v = graph.matmul %a, %c : (tensor<12x8xf32>, tensor<8x5xf32>) -> tensor<12x5xf32>
      spmd.yield %v : tensor<12x5xf32>
    }
    %hb = spmd.local(%h, %fb) {variant = "add.replicate, add.replicate, add.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<12x5xf32>, tensor<5xf32>) -> tensor<12x5xf32> {
    ^bb0(%a: tensor<12x5xf32>, %c: tensor<5xf32>):
      %v = graph.add %a, %c : (tensor<12x5xf32>, tensor<5xf32>) -> tensor<12x5xf32>
      spmd.yield %v : tensor<12x5xf32>
    }
    %k = spmd.local(%keep, %hb, %h) {variant = "select.replicate, select.replicate, select.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<12x5xi1>, tensor<12x5xf32>, tensor<12x5xf32>) -> tensor<12x5xf32> {
    ^bb0(%c: tensor<12x5xi1>, %a: tensor<12x5xf32>, %d: tensor<12x5xf32>):
      %v = graph.select %c, %a, %d : (tensor<12x5xi1>, tensor<12x5xf32>, tensor<12x5xf32>) -> tensor<12x5xf32>
      spmd.yield %v : tensor<12x5xf32>
    }
    %yr = spmd.local(%y) {variant = "reshape.replicate, reshape.replicate, reshape.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<4x3xi64>) -> tensor<12xi64> {
    ^bb0(%a: tensor<4x3xi64>):
      %v = graph.reshape %a : tensor<4x3xi64> -> tensor<12xi64>
      spmd.yield %v : tensor<12xi64>
    }
    %l = spmd.local(%k, %yr) {variant = "cross_entropy.replicate, cross_entropy.replicate, cross_entropy.replicate", dists = [#spmd.dist<[id, id, id]>]} : (tensor<12x5xf32>, tensor<12xi64>) -> tensor<f32> {
    ^bb0(%a: tensor<12x5xf32>, %c: tensor<12xi64>):
      %v = graph.cross_entropy %a, %c {reduction = "mean"} : (tensor<12x5xf32>, tensor<12xi64>) -> tensor<f32>
      spmd.yield %v : tensor<f32>
    }
    return %l : tensor<f32>
  }
}

// CHECK:      Mesh 3x2x1 (6 devices), 9 local ops, 1 collectives, 9 parameters, 2 micro-batch(es).
// CHECK:      MESH = Mesh(3, (2, 1), [DeviceClass("V100", (0, 2)),
// CHECK-NEXT:     DeviceClass("T4", (1,))])
// CHECK-NEXT: SEGMENTS = {0: [1, 1, 1, 0, 2, 0]}
// CHECK-NEXT: FINGERPRINT = "sha256:2ba643e6a56ebff49224c7e51f2160956c0138b745bcccc5f440399f734bcf6a"
// CHECK-NEXT: MICRO_BATCHES = 2

// CHECK:      D0 = "[id, id, id]"
// CHECK-NEXT: D1 = "[gather(1, 0), id, id]"
// CHECK-EMPTY:
// CHECK-NEXT: INPUTS = [
// CHECK-NEXT:     InputSpec("arg0", (4, 3), "i64", D0, bound=10),
// CHECK-NEXT:     InputSpec("arg1", (4, 3), "i64", D0, bound=5),
// CHECK-NEXT:     InputSpec("arg2", (12, 5), "i1", D0),
// CHECK-NEXT: ]
// CHECK-NEXT: PARAMETERS = [
// CHECK-NEXT:     ParamSpec("emb", (10, 8), "f32", D0, "replicated", init="normal"),
// CHECK-NEXT:     ParamSpec("ln.weight", (8,), "f32", D0, "zero1", init="ones"),
// CHECK-NEXT:     ParamSpec("ln.bias", (8,), "f32", D0, "zero2", init="zeros"),
// CHECK-NEXT:     ParamSpec("bn.weight", (3,), "f32", D0, "replicated", init="ones"),
// CHECK-NEXT:     ParamSpec("bn.bias", (3,), "f32", D0, "replicated", init="zeros"),
// CHECK-NEXT:     ParamSpec("bn.running_mean", (3,), "f32", D0, "buffer", init="zeros"),
// CHECK-NEXT:     ParamSpec("bn.running_var", (3,), "f32", D0, "buffer", init="ones"),
// CHECK-NEXT:     ParamSpec("fc.weight", (8, 5), "f32", D1, "zero3", init="normal"),
// CHECK-NEXT:     ParamSpec("fc.bias", (5,), "f32", D0, "replicated", init="zeros"),
// CHECK-NEXT: ]

// Parameters are read from the ParamSet; a ZeRO-3 one is gathered.
// CHECK:      def forward(rt, p, arg0, arg1, arg2):
// CHECK:          v0 = p["emb"]
// CHECK:          v7 = p["fc.weight"]
// CHECK-NEXT:     v8 = p.gathered("fc.weight", (8, 5), D1, (0,), "padded")
// CHECK:          v12 = ops.batch_norm(v11, v3, v4, v5, v6, epsilon=1e-05, momentum=0.1, training=False)
// CHECK:          v16 = ops.select(arg2, v15, v14)

// The groups the gradient syncs and recipes use beyond single axes.
// CHECK:      axis_sets=[(0, 1, 2), (1, 2)])

// NAMED:      InputSpec("input.ids", (4, 3), "i64", D0, bound=10),
// NAMED-NEXT: InputSpec("R", (4, 3), "i64", D0, bound=5),
// NAMED-NEXT: InputSpec("v2", (12, 5), "i1", D0),
// NAMED:      def forward(rt, p, input_ids, R_, v2_):
// NAMED:          v2 = p["ln.bias"]
// NAMED:          v10 = ops.gather(v0, input_ids, axis=0)
// NAMED:          v16 = ops.select(v2_, v15, v14)
// NAMED-NEXT:     v17 = ops.reshape(R_, shape=rt.extents((12,), D0))
