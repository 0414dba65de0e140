//===- Bert.cpp - BERT and BERT-MoE ---------------------------------------===//
//
// Post-LN encoder. Embeddings: token Gather + learned position embedding +
// LayerNorm (no token types). The LM head is one untied linear H→V with no
// transform layer; the loss covers every token. In bert-moe every other
// layer (odd indices) replaces its FFN with a top-2 MoE.
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Families.h"
#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

void zoo::buildBert(GraphBuilder &b, const ZooOptions &o) {
  Dim batch = b.batchDim();
  std::string ids =
      b.addInput("input_ids", onnx::TensorProto::INT64, {batch, o.seq});
  std::string labels =
      b.addInput("labels", onnx::TensorProto::INT64, {batch, o.seq});

  std::string x;
  {
    GraphBuilder::Scope scope(b, "embeddings");
    std::string words = b.addParam("word_embeddings", {o.vocab, o.hidden});
    std::string positions =
        b.addParam("position_embeddings", {o.seq, o.hidden});
    x = b.addNode("Gather", {words, ids}, {Attr::integer("axis", 0)});
    x = b.addNode("Add", {x, positions});
    x = addLayerNorm(b, "LayerNorm", x, o.hidden, 1e-12f);
  }

  TransformerConfig config;
  config.hidden = o.hidden;
  config.heads = o.heads;
  config.ffn = o.ffn;
  config.seq = o.seq;
  config.layerNormEpsilon = 1e-12f;
  bool moe = o.kind == ZooModelKind::BertMoe;
  if (moe) {
    config.experts = o.experts;
    config.capacity = moeCapacity(o);
    config.capacityFactor = o.capacityFactor;
  }
  for (int64_t i = 0; i < o.layers; ++i) {
    GraphBuilder::Scope scope(b, "encoder.layer." + std::to_string(i));
    x = addTransformerBlock(b, config, x, /*useMoe=*/moe && i % 2 == 1);
  }
  std::string logits = addLinear(b, "lm_head", x, o.hidden, o.vocab);
  addTokenLoss(b, logits, labels, o.seq, o.vocab);
}
