// RUN: weft-opt --spmd-assign-ratios="cluster=%S/Inputs/tiny-cluster.yaml" %s -o %t.1.mlir
// RUN: FileCheck %s < %t.1.mlir
// Idempotent: a second run leaves its own output unchanged.
// RUN: weft-opt --spmd-assign-ratios="cluster=%S/Inputs/tiny-cluster.yaml" %t.1.mlir -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// The cluster is required.
// A plan whose costs are linearised (tiny BERT on mixed-256, the ratios
// just assigned by weftc): the sequential LP finds its optimum at the trust
// region's centre and stops after two LPs instead of halving the radius
// through all eight. One collective per gradient tensor (--bucket-mb 0):
// in 25 MiB buckets the tiny model's syncs cost next to nothing and weftc
// picks a plan with no segment for the LP to move.
// RUN: rm -rf %t.dump && weft-zoo bert --layers 1 --hidden 64 --heads 4 --seq 16 --vocab 100 --ffn 128 --batch 8 -o %t.bert.onnx
// RUN: weftc %t.bert.onnx --cluster %weft_src/examples/clusters/mixed-256.yaml -o %t.bert --no-cache --max-expansions 2000 --bucket-mb 0 --dump-dir %t.dump > /dev/null 2>&1
// RUN: weft-opt --spmd-assign-ratios="cluster=%weft_src/examples/clusters/mixed-256.yaml report=true" %t.dump/03-assign-ratios.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=CENTRE
// RUN: %expect-exit 1 weft-opt --spmd-assign-ratios %s 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: %expect-exit 1 weft-opt --spmd-assign-ratios="cluster=%S/Inputs/missing.yaml" %s 2>&1 | FileCheck %s --check-prefix=MISSING

// DP-EV baseline of a 2-layer MLP (batch 96) on Inputs/tiny-cluster.yaml
// (one V100 node of 4 and one P100 node of 2; the mesh cuts the V100 node
// into two mesh nodes of 2). The even split (1/6 per device) is replaced by
// the LP's ratios; the batch segment loses its integer sizes (spmd-integerize
// writes them) and the ratios still sum to 1 over the mesh (the verifier).

// CHECK: spmd.segments = [#spmd.segment<id = 0, extent = 96, ratios = [0.2413480885311{{[0-9]*}}, 0.01730382293762{{[0-9]*}}]>]
// CHECK-NOT: sizes
// CHECK: func.func @main
// CENTRE: remark: ratios unchanged: {{.*}} ({{[12]}} LP(s),

// NOCLUSTER: error: spmd-assign-ratios: the pass needs the cluster: cluster=<path to spec yaml>
// MISSING: error: spmd-assign-ratios: {{.*}}missing.yaml

module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [2]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 96, ratios = [0.16666666666666666, 0.16666666666666666], sizes = [16, 16, 16, 16, 16, 16]>], spmd.version = 2 : i64} {
  func.func @main(%arg0: tensor<96x64xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}, %arg1: tensor<96xi64> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}) -> tensor<f32> {
    %0 = spmd.parameter "layers.0.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x64xf32> -> #spmd.dist<[id, id]>
    %1 = spmd.parameter "layers.0.bias" {strategy = #spmd.strategy<replicated>} : tensor<64xf32> -> #spmd.dist<[id, id]>
    %2 = spmd.parameter "layers.1.weight" {strategy = #spmd.strategy<replicated>} : tensor<64x10xf32> -> #spmd.dist<[id, id]>
    %3 = spmd.parameter "layers.1.bias" {strategy = #spmd.strategy<replicated>} : tensor<10xf32> -> #spmd.dist<[id, id]>
    %4 = spmd.local(%arg0, %0) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "matmul.split"} : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x64xf32>):
      %12 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x64xf32>) -> tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %5 = spmd.local(%4, %1) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "add.split"} : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64xf32>):
      %12 = graph.add %arg2, %arg3 : (tensor<96x64xf32>, tensor<64xf32>) -> tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %6 = spmd.local(%5) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "relu.split"} : (tensor<96x64xf32>) -> tensor<96x64xf32> {
    ^bb0(%arg2: tensor<96x64xf32>):
      %12 = graph.relu %arg2 : tensor<96x64xf32>
      spmd.yield %12 : tensor<96x64xf32>
    }
    %7 = spmd.local(%6, %2) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "matmul.split"} : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x64xf32>, %arg3: tensor<64x10xf32>):
      %12 = graph.matmul %arg2, %arg3 : (tensor<96x64xf32>, tensor<64x10xf32>) -> tensor<96x10xf32>
      spmd.yield %12 : tensor<96x10xf32>
    }
    %8 = spmd.local(%7, %3) {dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>], variant = "add.split"} : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<10xf32>):
      %12 = graph.add %arg2, %arg3 : (tensor<96x10xf32>, tensor<10xf32>) -> tensor<96x10xf32>
      spmd.yield %12 : tensor<96x10xf32>
    }
    %9 = spmd.local(%8, %arg1) {dists = [#spmd.dist<[sum, sum]>], variant = "cross_entropy.split-contraction"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32> {
    ^bb0(%arg2: tensor<96x10xf32>, %arg3: tensor<96xi64>):
      %12 = graph.cross_entropy %arg2, %arg3 {reduction = "mean"} : (tensor<96x10xf32>, tensor<96xi64>) -> tensor<f32>
      spmd.yield %12 : tensor<f32>
    }
    %10 = spmd.all_reduce %9 {axis = 1 : i64} : tensor<f32> -> #spmd.dist<[sum, id]>
    %11 = spmd.all_reduce %10 {axis = 0 : i64} : tensor<f32> -> #spmd.dist<[id, id]>
    return %11 : tensor<f32>
  }
}

