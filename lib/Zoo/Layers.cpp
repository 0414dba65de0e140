//===- Layers.cpp - Linear, GELU, LayerNorm and the loss ------------------===//

#include "weft/Zoo/Layers.h"
#include <cmath>

using namespace weft;
using namespace weft::zoo;

std::string zoo::addLinear(GraphBuilder &b, llvm::StringRef name,
                           const std::string &x, int64_t in, int64_t out,
                           bool bias) {
  GraphBuilder::Scope scope(b, name);
  std::string weight = b.addParam("weight", {in, out});
  std::string y = b.addNode("MatMul", {x, weight});
  if (!bias)
    return y;
  std::string biasParam = b.addParam("bias", {out}, ParamInit::Zeros);
  return b.addNode("Add", {y, biasParam});
}

std::string zoo::addGelu(GraphBuilder &b, const std::string &x) {
  std::string scaled = b.addNode("Div", {x, b.constFloat(std::sqrt(2.0f))});
  std::string erf = b.addNode("Erf", {scaled});
  std::string onePlus = b.addNode("Add", {erf, b.constFloat(1.0f)});
  std::string gated = b.addNode("Mul", {x, onePlus});
  return b.addNode("Mul", {gated, b.constFloat(0.5f)});
}

std::string zoo::addLayerNorm(GraphBuilder &b, llvm::StringRef name,
                              const std::string &x, int64_t hidden,
                              float epsilon) {
  GraphBuilder::Scope scope(b, name);
  std::string weight = b.addParam("weight", {hidden}, ParamInit::Ones);
  std::string bias = b.addParam("bias", {hidden}, ParamInit::Zeros);
  return b.addNode("LayerNormalization", {x, weight, bias},
                   {Attr::integer("axis", -1), Attr::real("epsilon", epsilon)});
}

std::string zoo::addCrossEntropyLoss(GraphBuilder &b, const std::string &logits,
                                     const std::string &labels) {
  b.addNode("SoftmaxCrossEntropyLoss", {logits, labels},
            {Attr::string("reduction", "mean")});
  std::string loss = b.renameLastOutput("loss");
  b.addOutput(loss, onnx::TensorProto::FLOAT, {});
  return loss;
}

std::string zoo::addTokenLoss(GraphBuilder &b, const std::string &logits,
                              const std::string &labels, int64_t tokens,
                              int64_t vocab) {
  Dim flat = b.batchDim(tokens);
  std::string logits2d =
      b.addNode("Reshape", {logits, b.constInts({-1, vocab})});
  b.setShape(logits2d, {flat, vocab});
  std::string labels1d = b.addNode("Reshape", {labels, b.constInts({-1})});
  b.setShape(labels1d, {flat}, onnx::TensorProto::INT64);
  return addCrossEntropyLoss(b, logits2d, labels1d);
}
