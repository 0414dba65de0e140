// weft-translate --spmd-to-torch on bad input: one line on stderr
// (`weft-translate: error: ...`), exit 1, no program left behind; a plan
// whose shards do not fit a local's op exits 3 (docs/ExitCodes.md). The
// plan below is good; the bad ones are derived from it.
//
// RUN: weft-translate --spmd-to-torch %s -o %t.py
// RUN: FileCheck %s --check-prefix=GOOD < %t.py
// RUN: %syspython -m py_compile %t.py
// GOOD: v2 = rt.all_gather(v1, (4, 3), D0, 1, "padded")
// RUN: weft-translate --spmd-to-torch %s --graph %S/Inputs/spmd-to-torch-errors-model.mlir | FileCheck %s --check-prefix=MODEL
// MODEL: def forward(rt, p, x):
// RUN: grep -v '^//' %s > %t.plan.mlir
//
// A plan of format version 1 (attributes as strings) and of a later one.
// RUN: sed -E 's/spmd\.version = 2/spmd.version = 1/; s/#spmd\.strategy<([a-z0-9]+)>/"\1"/g; s/#spmd\.gather_mode<([a-z]+)>/"\1"/g' %t.plan.mlir > %t.v1.mlir
// RUN: grep -c 'mode = "padded"' %t.v1.mlir
// RUN: rm -f %t.out.py && %expect-exit 1 weft-translate --spmd-to-torch %t.v1.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=V1 < %t.err && count 1 < %t.err && not test -e %t.out.py
// V1: weft-translate: error: cannot load plan '{{.*}}v1.mlir': {{.*}}unsupported plan format version 1 : i64: this build reads version 2 (write the plan again with this weftc)
// RUN: sed 's/spmd.version = 2/spmd.version = 3/' %t.plan.mlir > %t.v3.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.v3.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=V3 < %t.err && count 1 < %t.err && not test -e %t.out.py
// V3: weft-translate: error: cannot load plan '{{.*}}': {{.*}}unsupported plan format version 3 : i64: this build reads version 2
//
// A plan that does not verify: segment sizes that do not add up.
// RUN: sed 's/sizes = \[3, 1\]/sizes = [3, 2]/' %t.plan.mlir > %t.sizes.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.sizes.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=SIZES < %t.err && count 1 < %t.err && not test -e %t.out.py
// SIZES: weft-translate: error: cannot load plan '{{.*}}': {{.*}}segment 0: integer sizes sum to 5, expected the extent 4
//
// spmd.send/spmd.recv outside the stage modules of a pipelined plan: the
// emitter's own refusal (pipelined plans: spmd-to-torch-pipeline.test).
// RUN: sed 's/    %m = spmd.local(%hg)/    spmd.send %hg {peer = 1 : i64} : tensor<4x3xf32>\n    %hv = spmd.recv {peer = 0 : i64} : tensor<4x3xf32> -> #spmd.dist<[id, id]>\n    %m = spmd.local(%hv)/' %t.plan.mlir > %t.stages.mlir
// RUN: grep -c 'spmd.recv' %t.stages.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.stages.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=STAGES < %t.err && count 1 < %t.err && not test -e %t.out.py
// STAGES: weft-translate: error: spmd.send: spmd.send/spmd.recv outside the stage modules of a pipelined plan (docs/Pipeline.md)
//
// No such plan; no mesh.
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.missing.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=MISSING < %t.err && count 1 < %t.err && not test -e %t.out.py
// MISSING: weft-translate: error: cannot load plan '{{.*}}missing.mlir': {{.*}}could not open input file
// RUN: echo 'module {}' > %t.nomesh.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.nomesh.mlir 2>&1 | FileCheck %s --check-prefix=NOMESH
// NOMESH: weft-translate: error: the plan has no 'spmd.mesh' attribute
//
// --graph: missing, not MLIR, without @main, another model's.
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s --graph %t.nograph.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=NOGRAPH < %t.err && count 1 < %t.err && not test -e %t.out.py
// NOGRAPH: weft-translate: error: cannot load graph program '{{.*}}nograph.mlir': {{.*}}could not open input file
// RUN: echo 'not a graph {' > %t.garbage.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s --graph %t.garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: weft-translate: error: cannot load graph program '{{.*}}garbage.mlir': {{.*}}
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s --graph %t.nomesh.mlir 2>&1 | FileCheck %s --check-prefix=GRAPHMAIN
// GRAPHMAIN: weft-translate: error: the graph program has no func.func @main
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s --graph %S/Inputs/spmd-to-torch-recipes-model.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=OTHER < %t.err && count 1 < %t.err && not test -e %t.out.py
// OTHER: weft-translate: error: the graph program is not the plan's model: its @main takes 2 input(s), the plan's 1
// RUN: sed 's/tensor<4x/tensor<8x/g' %S/Inputs/spmd-to-torch-errors-model.mlir > %t.model8.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s --graph %t.model8.mlir 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: weft-translate: error: the graph program is not the plan's model: input 0 is tensor<8x2xf32> there, tensor<4x2xf32> in the plan
//
// What the emitter cannot express.
// RUN: sed 's/    return %m : tensor<f32>/    return %m, %m : tensor<f32>, tensor<f32>/; s/}) -> tensor<f32> {/}) -> (tensor<f32>, tensor<f32>) {/' %t.plan.mlir > %t.two.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.two.mlir 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: weft-translate: error: @main returns 2 values; a training plan returns its loss
// RUN: sed 's/%v = graph.reduce_mean %a/%u = graph.relu %a : tensor<4x3xf32>\n      %v = graph.reduce_mean %u/' %t.plan.mlir > %t.twoops.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.twoops.mlir 2>&1 | FileCheck %s --check-prefix=TWOOPS
// TWOOPS: weft-translate: error: graph.reduce_mean: an spmd.local holds more than one graph op
// RUN: sed 's/"reduce_mean.replicate, reduce_mean.replicate"/"reduce_mean.replicate, reduce_mean.split-everything"/' %t.plan.mlir > %t.variant.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %t.variant.mlir 2>&1 | FileCheck %s --check-prefix=VARIANT
// VARIANT: weft-translate: error: graph.reduce_mean: 'reduce_mean.split-everything' (mesh axis 1) is not a sharding rule of the op
//
// The input whole on every device (no spmd.dist), the matmul's result split:
// device 0's shards do not fit the op (exit 3).
// RUN: sed 's/ {spmd.dist = #spmd.dist<\[id, gather(0, 0)\]>}) -> tensor<f32>/) -> tensor<f32>/' %t.plan.mlir > %t.whole.mlir
// RUN: %expect-exit 3 weft-translate --spmd-to-torch %t.whole.mlir -o %t.out.py 2> %t.err
// RUN: FileCheck %s --check-prefix=SHARDS < %t.err && count 1 < %t.err && not test -e %t.out.py
// SHARDS: weft-translate: error: graph.matmul: the recipe 'matmul.replicate, matmul.split-rows' cannot run on device 0's shards: 'graph.matmul' op expected result shape [4x3], found [3x3]
//
// An output that cannot be written.
// RUN: %expect-exit 1 weft-translate --spmd-to-torch %s -o %t.missing-dir/program.py 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: weft-translate: error: cannot write '{{.*}}missing-dir/program.py': No such file or directory

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "CPU", peak_gflops = 100, memory_mb = 4000, nodes = [0]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [3, 1]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x2xf32> {spmd.dist = #spmd.dist<[id, gather(0, 0)]>}) -> tensor<f32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<zero1>} : tensor<2x3xf32> -> #spmd.dist<[id, id]>
    %h = spmd.local(%x, %w) {variant = "matmul.replicate, matmul.split-rows", dists = [#spmd.dist<[id, gather(0, 0)]>]} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32> {
    ^bb0(%a: tensor<4x2xf32>, %b: tensor<2x3xf32>):
      %v = graph.matmul %a, %b : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      spmd.yield %v : tensor<4x3xf32>
    }
    %hg = spmd.all_gather %h {axis = 1 : i64, mode = #spmd.gather_mode<padded>} : tensor<4x3xf32> -> #spmd.dist<[id, id]>
    %m = spmd.local(%hg) {variant = "reduce_mean.replicate, reduce_mean.replicate", dists = [#spmd.dist<[id, id]>]} : (tensor<4x3xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x3xf32>):
      %v = graph.reduce_mean %a {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x3xf32> -> tensor<f32>
      spmd.yield %v : tensor<f32>
    }
    return %m : tensor<f32>
  }
}
