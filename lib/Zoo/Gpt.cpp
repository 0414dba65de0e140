//===- Gpt.cpp - GPT-style decoder ----------------------------------------===//
//
// GPT-2 layout: token + position embeddings, pre-LN blocks with a causal
// mask (a bool Constant [S, S] applied with Where), a final LayerNorm and an
// untied LM head without bias. Next-token loss: logits[:, :-1] against
// labels[:, 1:] (Slice), as Hugging Face's GPT2LMHeadModel shifts them.
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Families.h"
#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

/// The lower-triangular mask: position i attends to j <= i.
static std::string addCausalMask(GraphBuilder &b, int64_t seq) {
  std::vector<bool> mask(size_t(seq * seq));
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j <= i; ++j)
      mask[size_t(i * seq + j)] = true;
  return b.constBools({seq, seq}, mask);
}

void zoo::buildGpt(GraphBuilder &b, const ZooOptions &o) {
  Dim batch = b.batchDim();
  std::string ids =
      b.addInput("input_ids", onnx::TensorProto::INT64, {batch, o.seq});
  std::string labels =
      b.addInput("labels", onnx::TensorProto::INT64, {batch, o.seq});

  std::string words = b.addParam("wte", {o.vocab, o.hidden});
  std::string positions = b.addParam("wpe", {o.seq, o.hidden});
  std::string x = b.addNode("Gather", {words, ids}, {Attr::integer("axis", 0)});
  x = b.addNode("Add", {x, positions});

  TransformerConfig config;
  config.hidden = o.hidden;
  config.heads = o.heads;
  config.ffn = o.ffn;
  config.seq = o.seq;
  config.layerNormEpsilon = 1e-5f;
  config.preNorm = true;
  config.causalMask = addCausalMask(b, o.seq);
  for (int64_t i = 0; i < o.layers; ++i) {
    GraphBuilder::Scope scope(b, "h." + std::to_string(i));
    x = addTransformerBlock(b, config, x, /*useMoe=*/false);
  }
  x = addLayerNorm(b, "ln_f", x, o.hidden, config.layerNormEpsilon);
  std::string logits =
      addLinear(b, "lm_head", x, o.hidden, o.vocab, /*bias=*/false);

  // Shift: predict token t+1 from positions <= t.
  std::string axis = b.constInts({1});
  logits = b.addNode(
      "Slice", {logits, b.constInts({0}), b.constInts({o.seq - 1}), axis});
  std::string next = b.addNode(
      "Slice", {labels, b.constInts({1}), b.constInts({o.seq}), axis});
  addTokenLoss(b, logits, next, o.seq - 1, o.vocab);
}
