// A 2-layer MLP graph program (batch 8, hidden 64, 10 classes) as weft-translate
// --import-onnx writes it: the input of the synthesis pass tests.
module {
  func.func @main(%arg0: tensor<8x64xf32> {graph.input = "input"}, %arg1: tensor<8xi64> {graph.input = "labels"}) -> tensor<f32> {
    %0 = graph.parameter "layers.0.weight" : tensor<64x64xf32>
    %1 = graph.parameter "layers.0.bias" : tensor<64xf32>
    %2 = graph.parameter "layers.1.weight" : tensor<64x10xf32>
    %3 = graph.parameter "layers.1.bias" : tensor<10xf32>
    %4 = graph.matmul %arg0, %0 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %5 = graph.add %4, %1 : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    %6 = graph.relu %5 : tensor<8x64xf32>
    %7 = graph.matmul %6, %2 : (tensor<8x64xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
    %8 = graph.add %7, %3 : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
    %9 = graph.cross_entropy %8, %arg1 {reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    return %9 : tensor<f32>
  }
}

