//===- Mlp.cpp - The multi-layer perceptron -------------------------------===//

#include "weft/Zoo/Families.h"
#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

void zoo::buildMlp(GraphBuilder &b, const ZooOptions &o) {
  Dim batch = b.batchDim();
  std::string x =
      b.addInput("input", onnx::TensorProto::FLOAT, {batch, o.hidden});
  std::string labels = b.addInput("labels", onnx::TensorProto::INT64, {batch});
  for (int64_t i = 0; i + 1 < o.layers; ++i) {
    std::string name = "layers." + std::to_string(i);
    x = b.addNode("Relu", {addLinear(b, name, x, o.hidden, o.hidden)});
  }
  std::string name = "layers." + std::to_string(o.layers - 1);
  std::string logits = addLinear(b, name, x, o.hidden, o.classes);
  addCrossEntropyLoss(b, logits, labels);
}
