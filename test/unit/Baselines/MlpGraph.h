//===- MlpGraph.h - A small graph program for baseline tests -----*- C++
//-*-===//

#ifndef WEFT_TEST_UNIT_BASELINES_MLPGRAPH_H
#define WEFT_TEST_UNIT_BASELINES_MLPGRAPH_H

namespace weft::test {

/// A 2-layer MLP as the importer writes it: batch 64, 1024 features.
inline const char *kMlp = R"(module {
  func.func @main(%x: tensor<64x1024xf32> {graph.input = "input"}, %y: tensor<64xi64> {graph.input = "labels"}) -> tensor<f32> {
    %w0 = graph.parameter "l0.weight" : tensor<1024x1024xf32>
    %b0 = graph.parameter "l0.bias" : tensor<1024xf32>
    %w1 = graph.parameter "l1.weight" : tensor<1024x10xf32>
    %m0 = graph.matmul %x, %w0 : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32>
    %a0 = graph.add %m0, %b0 : (tensor<64x1024xf32>, tensor<1024xf32>) -> tensor<64x1024xf32>
    %r0 = graph.relu %a0 : tensor<64x1024xf32>
    %m1 = graph.matmul %r0, %w1 : (tensor<64x1024xf32>, tensor<1024x10xf32>) -> tensor<64x10xf32>
    %l = graph.cross_entropy %m1, %y {reduction = "mean"} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
})";

} // namespace weft::test

#endif // WEFT_TEST_UNIT_BASELINES_MLPGRAPH_H
