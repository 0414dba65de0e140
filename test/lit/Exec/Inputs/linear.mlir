// Logits [ln 3, 0] from a parameter with a value, label 0 (a constant): the
// loss is −ln(3/4) = 0.2876821 (to f32 precision) and the gradient softmax − onehot =
// [−0.25, 0.25], of norm 0.3535534.
func.func @main() -> tensor<f32> {
  %w = graph.parameter "w" {value = dense<[[1.09861229, 0.0]]> : tensor<1x2xf32>} : tensor<1x2xf32>
  %y = graph.constant dense<0> : tensor<1xi64> : tensor<1xi64>
  %l = graph.cross_entropy %w, %y {reduction = "mean"} : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
