//===- Vit.cpp - Vision transformer ---------------------------------------===//
//
// 4×4 patches (a strided Conv), a CLS token broadcast to the batch with
// Shape/Slice/Concat/Expand as torch exports `cls.expand(B, -1, -1)`, a
// learned position embedding, pre-LN blocks, a final LayerNorm and a linear
// head on the CLS token.
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Families.h"
#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

/// Broadcasts the CLS parameter [1, 1, H] to [B, 1, H] using B of `image`.
static std::string expandClsToken(GraphBuilder &b, const std::string &image,
                                  int64_t hidden) {
  std::string cls = b.addParam("cls_token", {1, 1, hidden});
  std::string shape = b.addNode("Shape", {image});
  std::string batch =
      b.addNode("Slice", {shape, b.constInts({0}), b.constInts({1})});
  std::string target = b.addNode("Concat", {batch, b.constInts({1, hidden})},
                                 {Attr::integer("axis", 0)});
  std::string out = b.addNode("Expand", {cls, target});
  // Without data propagation ONNX cannot see B in `target`.
  b.setShape(out, {b.batchDim(), 1, hidden});
  return out;
}

void zoo::buildVit(GraphBuilder &b, const ZooOptions &o) {
  Dim batch = b.batchDim();
  int64_t side = o.image / kVitPatch, patches = side * side;
  std::string image = b.addInput("input", onnx::TensorProto::FLOAT,
                                 {batch, 3, o.image, o.image});
  std::string labels = b.addInput("labels", onnx::TensorProto::INT64, {batch});

  std::string x;
  {
    GraphBuilder::Scope scope(b, "patch_embed");
    std::string weight =
        b.addParam("weight", {o.hidden, 3, kVitPatch, kVitPatch});
    std::string bias = b.addParam("bias", {o.hidden}, ParamInit::Zeros);
    x = b.addNode("Conv", {image, weight, bias},
                  {Attr::integers("kernel_shape", {kVitPatch, kVitPatch}),
                   Attr::integers("strides", {kVitPatch, kVitPatch})});
  }
  x = b.addNode("Reshape", {x, b.constInts({0, o.hidden, patches})});
  x = b.addNode("Transpose", {x}, {Attr::integers("perm", {0, 2, 1})});
  x = b.addNode("Concat", {expandClsToken(b, image, o.hidden), x},
                {Attr::integer("axis", 1)});
  x = b.addNode("Add", {x, b.addParam("pos_embed", {patches + 1, o.hidden})});

  TransformerConfig config;
  config.hidden = o.hidden;
  config.heads = o.heads;
  config.ffn = o.ffn;
  config.seq = patches + 1;
  config.layerNormEpsilon = 1e-6f;
  config.preNorm = true;
  for (int64_t i = 0; i < o.layers; ++i) {
    GraphBuilder::Scope scope(b, "blocks." + std::to_string(i));
    x = addTransformerBlock(b, config, x, /*useMoe=*/false);
  }
  x = addLayerNorm(b, "norm", x, o.hidden, config.layerNormEpsilon);
  // x[:, 0] as torch exports it: Gather with a scalar index.
  std::string cls =
      b.addNode("Gather", {x, b.constInt(0)}, {Attr::integer("axis", 1)});
  std::string logits = addLinear(b, "head", cls, o.hidden, o.classes);
  addCrossEntropyLoss(b, logits, labels);
}
