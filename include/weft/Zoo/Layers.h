//===- Layers.h - Layer builders shared by the zoo's families ---*- C++ -*-===//
//
// Linear layers, GELU, LayerNorm, multi-head attention, the feed-forward
// network, the GShard top-2 MoE and the transformer block, written op by op as
// `torch.onnx.export` would write them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ZOO_LAYERS_H
#define WEFT_ZOO_LAYERS_H

#include "weft/Zoo/GraphBuilder.h"

namespace weft {
namespace zoo {

/// `x · W (+ b)` with W of shape [in, out]: MatMul (+ Add). Parameters are
/// named `<scope>.<name>.weight` and `.bias`.
std::string addLinear(GraphBuilder &b, llvm::StringRef name,
                      const std::string &x, int64_t in, int64_t out,
                      bool bias = true);

/// GELU as torch exports it: x · 0.5 · (1 + erf(x / √2)) written as
/// Div, Erf, Add, Mul, Mul.
std::string addGelu(GraphBuilder &b, const std::string &x);

/// LayerNormalization over the last axis with scale and bias parameters
/// `<scope>.<name>.weight` / `.bias` of shape [hidden].
std::string addLayerNorm(GraphBuilder &b, llvm::StringRef name,
                         const std::string &x, int64_t hidden, float epsilon);

/// Sizes of one transformer stack.
struct TransformerConfig {
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
  /// Tokens per sequence (the attention extent).
  int64_t seq = 0;
  float layerNormEpsilon = 1e-12f;
  /// Pre-LN (GPT, ViT) instead of post-LN (BERT) blocks.
  bool preNorm = false;
  /// A causal mask; the Constant mask value name when set.
  std::string causalMask;
  /// Top-2 MoE in place of the FFN (experts > 0).
  int64_t experts = 0;
  int64_t capacity = 0;
  double capacityFactor = 0;
};

/// Multi-head self-attention on x [B, S, H]: separate Q/K/V projections,
/// Reshape to heads, Transpose, MatMul, Div by √d, optional causal Where,
/// Softmax, MatMul, Transpose, Reshape, output projection.
std::string addSelfAttention(GraphBuilder &b, const TransformerConfig &config,
                             const std::string &x);

/// The dense FFN: Linear H→F, GELU, Linear F→H.
std::string addFeedForward(GraphBuilder &b, const TransformerConfig &config,
                           const std::string &x);

/// The GShard top-2 MoE on x [G, S, H] (one group per sequence): the custom
/// op `weft.Top2Gating` gives dispatch and combine [G, S, E, C]; dispatch,
/// expert FFNs (weights [E, H, F], [E, F, H]) and combine use MatMul,
/// Reshape, Transpose and Unsqueeze only.
std::string addMixtureOfExperts(GraphBuilder &b,
                                const TransformerConfig &config,
                                const std::string &x);

/// One encoder/decoder block (attention + FFN or MoE, residuals, LayerNorms),
/// post-LN or pre-LN per `config`.
std::string addTransformerBlock(GraphBuilder &b,
                                const TransformerConfig &config,
                                const std::string &x, bool useMoe);

/// Mean cross-entropy of logits [N, C] against int64 labels [N]
/// (SoftmaxCrossEntropyLoss, reduction mean); declares the scalar graph
/// output `loss`.
std::string addCrossEntropyLoss(GraphBuilder &b, const std::string &logits,
                                const std::string &labels);

/// Mean cross-entropy over all tokens: logits [B, T, V] and labels [B, T]
/// are flattened to [B·T, V] and [B·T] with Reshape (the symbolic dim is
/// named `batch*T`).
std::string addTokenLoss(GraphBuilder &b, const std::string &logits,
                         const std::string &labels, int64_t tokens,
                         int64_t vocab);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_LAYERS_H
