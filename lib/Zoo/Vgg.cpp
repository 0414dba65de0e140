//===- Vgg.cpp - VGG19 for CIFAR-sized images -----------------------------===//
//
// The CIFAR variant of VGG19: 16 3×3 Conv+Relu layers in five stages, each
// closed by a 2×2 MaxPool, then Flatten and one linear classifier (three
// weight layers fewer than ImageNet's classifier, as CIFAR trainers use).
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Families.h"
#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

/// Output channels of the convolutions per stage.
static const int64_t kStageChannels[5] = {64, 128, 256, 512, 512};
static const int64_t kStageConvs[5] = {2, 2, 4, 4, 4};

/// A 3×3 same-padded Conv with bias followed by Relu.
static std::string addConvRelu(GraphBuilder &b, llvm::StringRef name,
                               const std::string &x, int64_t in, int64_t out) {
  GraphBuilder::Scope scope(b, name);
  std::string weight = b.addParam("weight", {out, in, 3, 3});
  std::string bias = b.addParam("bias", {out}, ParamInit::Zeros);
  std::string y = b.addNode("Conv", {x, weight, bias},
                            {Attr::integers("kernel_shape", {3, 3}),
                             Attr::integers("pads", {1, 1, 1, 1}),
                             Attr::integers("strides", {1, 1})});
  return b.addNode("Relu", {y});
}

void zoo::buildVgg19(GraphBuilder &b, const ZooOptions &o) {
  Dim batch = b.batchDim();
  std::string x = b.addInput("input", onnx::TensorProto::FLOAT,
                             {batch, 3, o.image, o.image});
  std::string labels = b.addInput("labels", onnx::TensorProto::INT64, {batch});
  int64_t channels = 3, layer = 0;
  for (int stage = 0; stage < 5; ++stage) {
    for (int64_t i = 0; i < kStageConvs[stage]; ++i) {
      std::string name = "features." + std::to_string(layer++);
      x = addConvRelu(b, name, x, channels, kStageChannels[stage]);
      channels = kStageChannels[stage];
    }
    x = b.addNode("MaxPool", {x},
                  {Attr::integers("kernel_shape", {2, 2}),
                   Attr::integers("strides", {2, 2})});
  }
  int64_t side = o.image / 32;
  x = b.addNode("Flatten", {x}, {Attr::integer("axis", 1)});
  std::string logits =
      addLinear(b, "classifier", x, channels * side * side, o.classes);
  addCrossEntropyLoss(b, logits, labels);
}
