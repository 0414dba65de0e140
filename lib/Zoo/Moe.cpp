//===- Moe.cpp - GShard top-2 mixture of experts --------------------------===//
//
// Tokens are grouped per sequence (G = batch, S tokens per group), so the
// expert capacity C is local to a group as in GShard. The einsums of GShard
// are written with MatMul, Reshape, Transpose and Unsqueeze:
//   dispatch: GSEC,GSH->EGCH    combine: GSEC,EGCH->GSH
//
//===----------------------------------------------------------------------===//

#include "weft/Zoo/Layers.h"

using namespace weft;
using namespace weft::zoo;

/// x [E, G, C, in] · W [E, in, out] + b [E, out] -> [E, G, C, out].
static std::string expertLinear(GraphBuilder &b, llvm::StringRef name,
                                const std::string &x, int64_t experts,
                                int64_t in, int64_t out) {
  GraphBuilder::Scope scope(b, name);
  std::string weight = b.addParam("weight", {experts, in, out});
  std::string bias = b.addParam("bias", {experts, out}, ParamInit::Zeros);
  std::string w = b.addNode("Unsqueeze", {weight, b.constInts({1})});
  std::string y = b.addNode("MatMul", {x, w});
  std::string bb = b.addNode("Unsqueeze", {bias, b.constInts({1, 2})});
  return b.addNode("Add", {y, bb});
}

std::string zoo::addMixtureOfExperts(GraphBuilder &b,
                                     const TransformerConfig &c,
                                     const std::string &x) {
  GraphBuilder::Scope scope(b, "moe");
  int64_t e = c.experts, cap = c.capacity, h = c.hidden, s = c.seq;
  Dim g = b.batchDim();
  std::string gate = b.addParam("gate.weight", {h, e});
  std::vector<std::string> routing =
      b.addNodeMulti("Top2Gating", {x, gate},
                     {Attr::integer("capacity", cap),
                      Attr::real("capacity_factor", float(c.capacityFactor))},
                     2, "weft");
  std::string dispatch = routing[0], combine = routing[1];
  // ONNX cannot infer custom ops: state their shapes.
  b.setShape(dispatch, {g, s, e, cap});
  b.setShape(combine, {g, s, e, cap});

  // Dispatch: [G,S,E,C] -> [G,E·C,S] · [G,S,H] -> [E,G,C,H].
  std::string d = b.addNode("Transpose", {dispatch},
                            {Attr::integers("perm", {0, 2, 3, 1})});
  d = b.addNode("Reshape", {d, b.constInts({0, e * cap, s})});
  std::string routed = b.addNode("MatMul", {d, x});
  routed = b.addNode("Reshape", {routed, b.constInts({0, e, cap, h})});
  routed =
      b.addNode("Transpose", {routed}, {Attr::integers("perm", {1, 0, 2, 3})});

  // Expert FFNs, batched over experts.
  std::string y = expertLinear(b, "experts.intermediate", routed, e, h, c.ffn);
  y = addGelu(b, y);
  y = expertLinear(b, "experts.output", y, e, c.ffn, h);

  // Combine: [G,S,E·C] · [G,E·C,H] -> [G,S,H].
  y = b.addNode("Transpose", {y}, {Attr::integers("perm", {1, 0, 2, 3})});
  y = b.addNode("Reshape", {y, b.constInts({0, e * cap, h})});
  std::string weights =
      b.addNode("Reshape", {combine, b.constInts({0, 0, e * cap})});
  return b.addNode("MatMul", {weights, y});
}
