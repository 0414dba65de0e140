// The estimated step as a Chrome trace (docs/Emit.md, "Pictures"): the
// JSON object form, complete events in µs with pid = node and tid = mesh
// device, metadata naming nodes and devices, overlapped gradient syncs on a
// thread of their own. check-trace.py checks the schema of every event.
//
// RUN: weft-translate --spmd-to-trace %S/Inputs/two-class-plan.mlir --cluster %S/Inputs/two-class.yaml -o %t.two.json
// RUN: %syspython %S/Inputs/check-trace.py %t.two.json forward,backward,collective,sync,update | FileCheck %s --check-prefix=SCHEMA
// RUN: FileCheck %s < %t.two.json
//
// SCHEMA: trace: {{[0-9]+}} complete events on 4 threads, kinds backward,collective,forward,sync,update
//
// CHECK: {"traceEvents": [
// CHECK-NEXT: {"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"node 0: v100-node (V100)"}},
// CHECK-NEXT: {"name":"process_sort_index","ph":"M","pid":0,"tid":0,"args":{"sort_index":0}},
// CHECK-NEXT: {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"device 0: V100, ratio 0.625"}},
// CHECK-NEXT: {"name":"thread_sort_index","ph":"M","pid":0,"tid":0,"args":{"sort_index":0}},
// CHECK-NEXT: {"name":"thread_name","ph":"M","pid":0,"tid":2,"args":{"name":"device 0: gradient sync (overlapped)"}},
// CHECK-NEXT: {"name":"thread_sort_index","ph":"M","pid":0,"tid":2,"args":{"sort_index":1}},
// CHECK-NEXT: {"name":"all_gather axis 0: fc1.bias","cat":"collective","ph":"X","ts":0.000,"dur":{{[0-9]+\.[0-9][0-9][0-9]}},"pid":0,"tid":0,"args":{"estimate":true,"micro_batch":0}},
// CHECK-NEXT: {"name":"fc1 matmul.split-lhs-rows","cat":"forward","ph":"X","ts":{{[0-9.]+}},"dur":{{[0-9.]+}},"pid":0,"tid":0,"args":{"estimate":true,"micro_batch":0}},
// CHECK: {"name":"fc1 matmul.split-lhs-rows","cat":"backward","ph":"X",{{.*}}"pid":0,"tid":0,
// CHECK: {"name":"gradient sync","cat":"sync","ph":"X",{{.*}}"pid":0,"tid":2,
// CHECK: {"name":"optimizer update","cat":"update","ph":"X",{{.*}}"pid":0,"tid":0,"args":{"estimate":true}}
// CHECK: {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"node 1: p100-node (P100)"}},
// CHECK: {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"device 1: P100, ratio 0.375"}},
// CHECK: {"name":"fc1 matmul.split-lhs-rows","cat":"forward",{{.*}}"pid":1,"tid":1,
// CHECK: ],
// CHECK-NEXT: "displayTimeUnit": "ms",
// CHECK-NEXT: "otherData": {
// CHECK-DAG: "cluster": "two-class",
// CHECK-DAG: "dtype": "fp32",
// CHECK-DAG: "estimate": true,
// CHECK-DAG: "format": "weft-estimated-trace",
// CHECK-DAG: "step_time_s": {{[0-9.e+-]+}},
// CHECK-DAG: "version": 1
// CHECK: }
// CHECK-NEXT: }
//
// 2 x 2: four devices on two nodes; 16 devices: one thread per group of
// alike devices, named with the devices it stands for.
// RUN: weft-translate --spmd-to-trace %S/Inputs/two-by-two-plan.mlir --cluster %S/Inputs/two-by-two.yaml -o %t.2x2.json
// RUN: %syspython %S/Inputs/check-trace.py %t.2x2.json forward,backward,collective,sync,update | FileCheck %s --check-prefix=SCHEMA4
// SCHEMA4: trace: {{[0-9]+}} complete events on 4 threads
// RUN: weft-translate --spmd-to-trace %S/Inputs/sixteen-plan.mlir --cluster %weft_src/examples/clusters/hap-16.yaml -o %t.16.json
// RUN: %syspython %S/Inputs/check-trace.py %t.16.json forward,backward,collective,sync,update
// RUN: FileCheck %s --check-prefix=SIXTEEN < %t.16.json
// SIXTEEN: {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"device 0: V100, ratio 0.100 (for 4 devices: 0-3)"}},
// SIXTEEN: {"name":"thread_name","ph":"M","pid":2,"tid":4,"args":{"name":"device 4: P100, ratio 0.050 (for 12 devices: 4-15)"}},
// SIXTEEN-NOT: "thread_name","ph":"M","pid":{{[0-9]+}},"tid":{{([0-9]|1[0-5])}},
//
// The checker fails a trace that breaks the format.
// RUN: sed 's/"ph":"X"/"ph":"B"/' %t.two.json > %t.phase.json
// RUN: %expect-exit 1 %syspython %S/Inputs/check-trace.py %t.phase.json | FileCheck %s --check-prefix=BADPHASE
// BADPHASE: check-trace: event {{[0-9]+}}: phase 'B'
// RUN: sed 's/"name":"thread_name"/"name":"thread_label"/' %t.two.json > %t.meta.json
// RUN: %expect-exit 1 %syspython %S/Inputs/check-trace.py %t.meta.json | FileCheck %s --check-prefix=BADMETA
// BADMETA: check-trace: event {{[0-9]+}}: unknown metadata 'thread_label'
// RUN: sed 's/"ts":0.000,/"ts":-1,/' %t.two.json > %t.ts.json
// RUN: %expect-exit 1 %syspython %S/Inputs/check-trace.py %t.ts.json | FileCheck %s --check-prefix=BADTS
// BADTS: check-trace: event {{[0-9]+}}: ts must be a number >= 0
//
// Bad input: one line, exit 1.
// RUN: %expect-exit 1 weft-translate --spmd-to-trace %S/Inputs/two-class-plan.mlir 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: weft-translate: error: the estimated step needs the cluster the plan runs on: give --cluster spec.yaml
// RUN: sed 's/spmd.version = 2/spmd.version = 3/' %S/Inputs/two-class-plan.mlir > %t.v3.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-trace %t.v3.mlir --cluster %S/Inputs/two-class.yaml 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: unsupported plan format version 3 : i64: this build reads version 2
// RUN: sed 's/sizes = \[40, 24\]/sizes = [40, 25]/' %S/Inputs/two-class-plan.mlir > %t.unverified.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-trace %t.unverified.mlir --cluster %S/Inputs/two-class.yaml 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: weft-translate: error: cannot load plan '{{.*}}': {{.*}}segment 0: integer sizes sum to 65, expected the extent 64
