// The estimated step as a picture (docs/Emit.md, "Pictures"): an SVG 1.1
// document with a legend, one lane per device labelled with its type and
// ratio, events with their op or collective as a tooltip, a time axis in
// ms, the step's end marked, and memory bars against capacity.
//
// 2 x 2 devices (a V100 node and a P100 node of two): one lane each.
// RUN: weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir --cluster %S/Inputs/two-by-two.yaml -o %t.2x2.svg
// RUN: FileCheck %s < %t.2x2.svg
// RUN: %syspython -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" %t.2x2.svg
//
// CHECK: <svg xmlns="http://www.w3.org/2000/svg" version="1.1"
// CHECK: <title>Estimated training step: two-by-two-plan.mlir on two-by-two, fp32</title>
// CHECK: communication share {{[0-9.]+}} %, optimizer {{[0-9.]+}} ms (every figure an estimate)
// CHECK: >forward</text>
// CHECK: >backward</text>
// CHECK: >collective</text>
// CHECK: >gradient sync</text>
// CHECK: >optimizer update</text>
// CHECK: >idle</text>
// CHECK: >time (ms)</text>
// CHECK: >device 0: V100, ratio 0.300</text>
// CHECK-NEXT: <rect class="lane" x="290.00" y="100.00" width="870.00" height="24.00" fill="#e4e4e4"/>
// Events narrower than a pixel merge with their neighbours of one kind;
// wider ones (the collectives) stay one rectangle each.
// CHECK: fill="#4e79a7"><title>4 forward events, fc1 matmul.split-lhs-rows, matmul.split-lhs-rows … loss cross_entropy.split-batch, cross_entropy.split-batch, {{[0-9.]+}} ms from 0.000 ms</title>
// CHECK-NEXT: fill="#e15759"><title>all_reduce axis 1: loss.node: collective,
// CHECK-NEXT: fill="#e15759"><title>all_reduce axis 0: loss.all: collective,
// CHECK-NEXT: fill="#e15759"><title>all_reduce axis 0 (dual of all_reduce): loss.all: collective,
// CHECK-NEXT: fill="#e15759"><title>all_reduce axis 1 (dual of all_reduce): loss.node: collective,
// CHECK-NEXT: fill="#f28e2b"><title>4 backward events, loss cross_entropy.split-batch, cross_entropy.split-batch … fc1 matmul.split-lhs-rows, matmul.split-lhs-rows,
// CHECK-NEXT: fill="#59a14f"><title>optimizer update: optimizer update,
// CHECK-NEXT: fill="#e15759"><title>all_gather after the update: collective,
// CHECK-NEXT: y="116.00" width="{{[0-9.]+}}" height="8.00" fill="#76b7b2"><title>gradient sync: gradient sync,
// CHECK: >device 1: V100, ratio 0.300</text>
// CHECK: >device 2: P100, ratio 0.200</text>
// CHECK: >device 3: P100, ratio 0.200</text>
// CHECK: estimated step {{[0-9.]+}} ms</text>
// CHECK: Memory per device at its peak (GB; estimate; dashed: usable, 10 % held back)
// CHECK: >kept activations</text>
// CHECK: >device 0: V100, ratio 0.300</text>
// CHECK: <rect class="memory"
// CHECK: of 16.00 GB</text>
// CHECK: </svg>
//
// Two devices of two classes.
// RUN: weft-translate --spmd-to-timeline %S/Inputs/two-class-plan.mlir --cluster %S/Inputs/two-class.yaml | FileCheck %s --check-prefix=TWO
// TWO: >device 0: V100, ratio 0.625</text>
// TWO: <title>all_gather axis 0: fc1.bias: collective,
// TWO: <title>reduce_scatter axis 0 (dual of all_gather): fc1.bias: collective,
// TWO: >device 1: P100, ratio 0.375</text>
// TWO-NEXT: <rect class="lane"
// TWO-NOT: class="lane"
//
// Names are escaped.
// RUN: sed 's/loc("fc1")/loc("fc1 <\&>")/' %S/Inputs/two-class-plan.mlir > %t.names.mlir
// RUN: weft-translate --spmd-to-timeline %t.names.mlir --cluster %S/Inputs/two-class.yaml -o %t.names.svg
// RUN: %syspython -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" %t.names.svg
// RUN: FileCheck %s --check-prefix=ESCAPE < %t.names.svg
// ESCAPE: <title>5 forward events, fc1 &lt;&amp;&gt; matmul.split-lhs-rows … loss
//
// bf16 is priced as bf16.
// RUN: weft-translate --spmd-to-timeline %S/Inputs/two-class-plan.mlir --cluster %S/Inputs/two-class.yaml --dtype bf16 | FileCheck %s --check-prefix=BF16
// BF16: <title>Estimated training step: two-class-plan.mlir on two-class, bf16</title>
//
// 16 devices (hap-16): one lane per group of alike devices with its count,
// and the device with the most compute.
// RUN: weft-translate --spmd-to-timeline %S/Inputs/sixteen-plan.mlir --cluster %weft_src/examples/clusters/hap-16.yaml | FileCheck %s --check-prefix=GROUPS
// GROUPS: >4 × V100, ratio 0.100</text>
// GROUPS-NEXT: <rect class="lane"
// GROUPS: >12 × P100, ratio 0.050</text>
// GROUPS-NEXT: <rect class="lane"
// GROUPS: >slowest: device {{[0-9]+}}, {{V100, ratio 0.100|P100, ratio 0.050}}</text>
// GROUPS-NEXT: <rect class="lane"
// GROUPS-NOT: <rect class="lane"
// GROUPS: Memory per device
//
// Bad input: one line, exit 1.
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: weft-translate: error: the estimated step needs the cluster the plan runs on: give --cluster spec.yaml
// RUN: sed 's/spmd.version = 2/spmd.version = 7/' %S/Inputs/two-by-two-plan.mlir > %t.v7.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %t.v7.mlir --cluster %S/Inputs/two-by-two.yaml 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: unsupported plan format version 7 : i64: this build reads version 2
// RUN: sed 's/sizes = \[30, 30, 20, 20\]/sizes = [30, 30, 20, 19]/' %S/Inputs/two-by-two-plan.mlir > %t.unverified.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %t.unverified.mlir --cluster %S/Inputs/two-by-two.yaml 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: weft-translate: error: cannot load plan '{{.*}}': {{.*}}segment 0: integer sizes sum to 99, expected the extent 100
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir --cluster %S/Inputs/two-class.yaml 2>&1 | FileCheck %s --check-prefix=MESH
// MESH: weft-translate: error: mesh node 0 has 2 devices but cluster node 'v100-node' has 1
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir --cluster %S/Inputs/two-by-two.yaml --dtype fp8 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: weft-translate: error: unknown --dtype 'fp8' (expected fp32, bf16 or fp16)
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir --cluster %t.missing.yaml 2>&1 | FileCheck %s --check-prefix=SPEC
// SPEC: weft-translate: error: {{.*}}missing.yaml: cannot read cluster spec
// RUN: %expect-exit 1 weft-translate --spmd-to-timeline %S/Inputs/two-by-two-plan.mlir --cluster %S/Inputs/two-by-two.yaml -o %t.nodir/timeline.svg 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: weft-translate: error: cannot write '{{.*}}timeline.svg'
