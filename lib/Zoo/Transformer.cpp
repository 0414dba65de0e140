//===- Transformer.cpp - Attention, FFN and the transformer block ---------===//
//
// Shared by vit, bert, bert-moe and gpt. Reshapes copy leading dims with 0 so
// that ONNX's shape inference keeps the symbolic batch dim.
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Layers.h"
#include <cmath>

using namespace weft;
using namespace weft::zoo;

/// Projects x [B, S, H] and splits heads: [B, nh, S, d], or [B, nh, d, S]
/// for keys (`perm` picks which).
static std::string projectHeads(GraphBuilder &b, llvm::StringRef name,
                                const TransformerConfig &c,
                                const std::string &x,
                                llvm::ArrayRef<int64_t> perm) {
  int64_t headDim = c.hidden / c.heads;
  std::string y = addLinear(b, name, x, c.hidden, c.hidden);
  std::string split =
      b.addNode("Reshape", {y, b.constInts({0, 0, c.heads, headDim})});
  return b.addNode("Transpose", {split}, {Attr::integers("perm", perm)});
}

std::string zoo::addSelfAttention(GraphBuilder &b, const TransformerConfig &c,
                                  const std::string &x) {
  GraphBuilder::Scope scope(b, "attention");
  int64_t headDim = c.hidden / c.heads;
  std::string q = projectHeads(b, "query", c, x, {0, 2, 1, 3});
  std::string k = projectHeads(b, "key", c, x, {0, 2, 3, 1});
  std::string v = projectHeads(b, "value", c, x, {0, 2, 1, 3});
  std::string scores = b.addNode("MatMul", {q, k});
  scores = b.addNode("Div", {scores, b.constFloat(std::sqrt(float(headDim)))});
  if (!c.causalMask.empty())
    scores = b.addNode("Where", {c.causalMask, scores, b.constFloat(-1.0e9f)});
  std::string probs =
      b.addNode("Softmax", {scores}, {Attr::integer("axis", -1)});
  std::string context = b.addNode("MatMul", {probs, v});
  context =
      b.addNode("Transpose", {context}, {Attr::integers("perm", {0, 2, 1, 3})});
  context = b.addNode("Reshape", {context, b.constInts({0, 0, c.hidden})});
  return addLinear(b, "output", context, c.hidden, c.hidden);
}

std::string zoo::addFeedForward(GraphBuilder &b, const TransformerConfig &c,
                                const std::string &x) {
  GraphBuilder::Scope scope(b, "ffn");
  std::string h = addLinear(b, "intermediate", x, c.hidden, c.ffn);
  h = addGelu(b, h);
  return addLinear(b, "output", h, c.ffn, c.hidden);
}

std::string zoo::addTransformerBlock(GraphBuilder &b,
                                     const TransformerConfig &c,
                                     const std::string &x, bool useMoe) {
  auto mlp = [&](const std::string &in) {
    return useMoe ? addMixtureOfExperts(b, c, in) : addFeedForward(b, c, in);
  };
  float eps = c.layerNormEpsilon;
  if (c.preNorm) {
    std::string a = addLayerNorm(b, "ln_1", x, c.hidden, eps);
    std::string h = b.addNode("Add", {x, addSelfAttention(b, c, a)});
    std::string m = addLayerNorm(b, "ln_2", h, c.hidden, eps);
    return b.addNode("Add", {h, mlp(m)});
  }
  std::string h = b.addNode("Add", {x, addSelfAttention(b, c, x)});
  h = addLayerNorm(b, "attention_norm", h, c.hidden, eps);
  std::string out = b.addNode("Add", {h, mlp(h)});
  return addLayerNorm(b, "output_norm", out, c.hidden, eps);
}
