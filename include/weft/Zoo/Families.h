//===- Families.h - Builders of the zoo's model families --------*- C++ -*-===//
//
// Each family adds its inputs, parameters and nodes to a GraphBuilder and
// ends in the scalar graph output `loss`. Options are validated beforehand.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ZOO_FAMILIES_H
#define WEFT_ZOO_FAMILIES_H

#include "weft/Zoo/GraphBuilder.h"
#include "weft/Zoo/Zoo.h"

namespace weft {
namespace zoo {

/// MLP: `layers` linear layers (hidden → hidden with ReLU, last → classes).
void buildMlp(GraphBuilder &b, const ZooOptions &options);

/// VGG19 for CIFAR-style images: 16 Conv+Relu layers in five MaxPool stages,
/// Flatten, one linear classifier.
void buildVgg19(GraphBuilder &b, const ZooOptions &options);

/// ViT: Conv patch embedding (4 × 4), CLS token, position embedding,
/// pre-LN encoder, LayerNorm, linear head on the CLS token.
void buildVit(GraphBuilder &b, const ZooOptions &options);

/// BERT (post-LN encoder, untied LM head over all tokens); with `kind ==
/// BertMoe` every other FFN is a top-2 MoE.
void buildBert(GraphBuilder &b, const ZooOptions &options);

/// GPT (pre-LN causal decoder, final LayerNorm, untied LM head without bias,
/// next-token loss).
void buildGpt(GraphBuilder &b, const ZooOptions &options);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_FAMILIES_H
