// spmd-dump writes the module, unchanged, to dir/name.mlir and passes it on;
// without a dir it does nothing; an unwritable dir is a one-line error.
// RUN: rm -rf %t.d && weft-opt --spmd-dump="dir=%t.d name=stage" %s -o %t.out.mlir
// RUN: diff %t.d/stage.mlir %t.out.mlir
// RUN: FileCheck %s < %t.d/stage.mlir
// RUN: weft-opt --spmd-dump %s | FileCheck %s
// RUN: touch %t.file && %expect-exit 1 weft-opt --spmd-dump="dir=%t.file/sub" %s 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %0 = graph.relu %arg0 : tensor<4xf32>
// ERR: error: spmd-dump: cannot create '{{.*}}': {{.*}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
