//===- GraphCost.cpp - Work of graph ops as functions of shapes -----------===//
//
// FLOP counts follow the usual conventions: a multiply-add is two FLOPs, a
// transcendental function a few. Backward counts cover the gradients of all
// operands; bytes assume each tensor is read or written once.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphCost.h"
#include "llvm/ADT/STLExtras.h"

using namespace weft::graph;

llvm::StringRef weft::graph::stringifyOpClass(OpClass c) {
  switch (c) {
  case OpClass::Free:
    return "free";
  case OpClass::MatMul:
    return "matmul";
  case OpClass::Conv:
    return "conv";
  case OpClass::Elementwise:
    return "elementwise";
  case OpClass::Reduction:
    return "reduction";
  case OpClass::Gather:
    return "gather";
  }
  return "unknown";
}

OpCost &OpCost::operator+=(const OpCost &other) {
  forwardFlops += other.forwardFlops;
  backwardFlops += other.backwardFlops;
  forwardBytes += other.forwardBytes;
  backwardBytes += other.backwardBytes;
  keptBytes += other.keptBytes;
  return *this;
}

static double operandBytes(const ShardShapes &s) {
  double bytes = 0;
  for (const TensorShape &t : s.operands)
    bytes += t.bytes();
  return bytes;
}

static double resultBytes(const ShardShapes &s) {
  double bytes = 0;
  for (const TensorShape &t : s.results)
    bytes += t.bytes();
  return bytes;
}

static double resultElements(const ShardShapes &s) {
  return s.results.empty() ? 0 : s.results.front().numElements();
}

static double inputElements(const ShardShapes &s) {
  return s.operands.empty() ? 0 : s.operands.front().numElements();
}

/// Fills the byte counts shared by most ops: the forward reads the operands
/// and writes the results; the backward reads the result gradients and what
/// was kept, and writes operand gradients.
static OpCost withBytes(OpCost cost, const ShardShapes &s, double kept) {
  cost.forwardBytes = operandBytes(s) + resultBytes(s);
  cost.keptBytes = kept;
  cost.backwardBytes = resultBytes(s) + operandBytes(s) + kept;
  return cost;
}

OpCost weft::graph::freeCost() { return OpCost(); }

OpCost weft::graph::unaryCost(const ShardShapes &s, double fwdPerElem,
                              double bwdPerElem, Keep keep) {
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  double n = resultElements(s);
  cost.forwardFlops = fwdPerElem * n;
  cost.backwardFlops = bwdPerElem * n;
  double kept = keep == Keep::Input    ? operandBytes(s)
                : keep == Keep::Result ? resultBytes(s)
                                       : 0;
  return withBytes(cost, s, kept);
}

OpCost weft::graph::binaryCost(const ShardShapes &s, double fwdPerElem,
                               double bwdPerElem, bool keepInputs) {
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  double n = resultElements(s);
  cost.forwardFlops = fwdPerElem * n;
  cost.backwardFlops = bwdPerElem * n;
  return withBytes(cost, s, keepInputs ? operandBytes(s) : 0);
}

OpCost weft::graph::matmulCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::MatMul;
  if (s.operands.empty() || s.operands[0].dims.empty())
    return cost;
  double k = s.operands[0].dims.back();
  cost.forwardFlops = 2 * resultElements(s) * k;
  cost.backwardFlops = 2 * cost.forwardFlops;
  return withBytes(cost, s, operandBytes(s));
}

OpCost weft::graph::conv2dCost(const ShardShapes &s, int64_t group) {
  OpCost cost;
  cost.opClass = OpClass::Conv;
  if (s.operands.size() < 2 || s.operands[1].dims.size() != 4)
    return cost;
  const auto &w = s.operands[1].dims;
  // Each output element is a dot product over (C/group)·KH·KW inputs.
  double window = double(w[1]) * w[2] * w[3];
  cost.forwardFlops = 2 * resultElements(s) * window;
  if (s.operands.size() > 2)
    cost.forwardFlops += resultElements(s);
  cost.backwardFlops = 2 * cost.forwardFlops;
  (void)group;
  return withBytes(cost, s, s.operands[0].bytes() + s.operands[1].bytes());
}

OpCost weft::graph::poolCost(const ShardShapes &s,
                             llvm::ArrayRef<int64_t> kernel) {
  OpCost cost;
  cost.opClass = OpClass::Reduction;
  double window = 1;
  for (int64_t k : kernel)
    window *= k;
  cost.forwardFlops = resultElements(s) * window;
  cost.backwardFlops = inputElements(s);
  return withBytes(cost, s, operandBytes(s));
}

/// A reduction-like op that reads its first input a fixed number of times
/// per element and keeps that input for its backward pass.
static OpCost perInputElementCost(const ShardShapes &s, double fwdPerElem,
                                  double bwdPerElem) {
  OpCost cost;
  cost.opClass = OpClass::Reduction;
  double n = inputElements(s);
  cost.forwardFlops = fwdPerElem * n;
  cost.backwardFlops = bwdPerElem * n;
  return withBytes(cost, s, s.operands.empty() ? 0 : s.operands[0].bytes());
}

OpCost weft::graph::softmaxCost(const ShardShapes &s) {
  // max, subtract, exp, sum, divide (or log for the log/loss forms).
  return perInputElementCost(s, 5, 4);
}

OpCost weft::graph::normCost(const ShardShapes &s) {
  // mean, centre, square, mean, rsqrt-scale, affine.
  return perInputElementCost(s, 8, 10);
}

OpCost weft::graph::reduceCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::Reduction;
  cost.forwardFlops = inputElements(s);
  cost.backwardFlops = inputElements(s);
  return withBytes(cost, s, 0);
}

OpCost weft::graph::movementCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  return withBytes(cost, s, 0);
}

OpCost weft::graph::gatherCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::Gather;
  // The backward scatter-adds each result gradient element into the table.
  cost.backwardFlops = resultElements(s);
  cost.forwardBytes =
      2 * resultBytes(s) + (s.operands.size() > 1 ? s.operands[1].bytes() : 0);
  cost.keptBytes = s.operands.size() > 1 ? s.operands[1].bytes() : 0;
  cost.backwardBytes = cost.forwardBytes;
  return cost;
}

OpCost weft::graph::dropoutCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  double n = resultElements(s);
  cost.forwardFlops = 2 * n;
  cost.backwardFlops = n;
  // The mask is kept at one byte per element.
  return withBytes(cost, s, n);
}

OpCost weft::graph::top2GatingCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::MatMul;
  if (s.operands.size() < 2 || s.operands[0].dims.size() != 3 ||
      s.operands[1].dims.size() != 2)
    return cost;
  double tokens = double(s.operands[0].dims[0]) * s.operands[0].dims[1];
  double h = s.operands[1].dims[0], e = s.operands[1].dims[1];
  // Gate projection, softmax over experts, top-2 choice and slot assignment.
  cost.forwardFlops = 2 * tokens * h * e + 10 * tokens * e + resultElements(s);
  cost.backwardFlops = 4 * tokens * h * e + 4 * tokens * e;
  return withBytes(cost, s, operandBytes(s));
}

OpCost weft::graph::convTranspose2dCost(const ShardShapes &s) {
  OpCost cost;
  cost.opClass = OpClass::Conv;
  if (s.operands.size() < 2 || s.operands[1].dims.size() != 4)
    return cost;
  const auto &w = s.operands[1].dims;
  // Each input element scales a kernel of (O/group)·KH·KW outputs.
  double window = double(w[1]) * w[2] * w[3];
  cost.forwardFlops = 2 * inputElements(s) * window;
  if (s.operands.size() > 2)
    cost.forwardFlops += resultElements(s);
  cost.backwardFlops = 2 * cost.forwardFlops;
  return withBytes(cost, s, s.operands[0].bytes() + s.operands[1].bytes());
}

OpCost weft::graph::resizeCost(const ShardShapes &s, llvm::StringRef mode,
                               bool antialias) {
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  if (s.operands.empty() || s.results.empty() ||
      s.operands[0].dims.size() != s.results[0].dims.size())
    return cost;
  // Taps per result element: the product over resized dims of the
  // interpolation's support, widened by 1 / scale where antialias shrinks.
  double taps = 1;
  for (auto [in, out] : llvm::zip(s.operands[0].dims, s.results[0].dims)) {
    if (in == out || out == 0)
      continue;
    double support = mode == "cubic" ? 4 : mode == "linear" ? 2 : 1;
    if (antialias && out < in && mode != "nearest")
      support *= double(in) / double(out);
    taps *= support;
  }
  if (mode != "nearest") {
    cost.forwardFlops = 2 * taps * resultElements(s);
    cost.backwardFlops = cost.forwardFlops;
  }
  // Linear in the input with weights fixed by the shapes: nothing is kept.
  return withBytes(cost, s, 0);
}

OpCost weft::graph::scatterCost(const ShardShapes &s,
                                llvm::StringRef reduction) {
  OpCost cost;
  cost.opClass = OpClass::Gather;
  if (s.operands.size() < 3)
    return cost;
  double updates = s.operands[2].numElements();
  if (reduction != "none")
    cost.forwardFlops = updates;
  // The backward masks or scales the data's gradient and gathers the
  // updates' gradients.
  cost.backwardFlops = resultElements(s) + updates;
  double kept = s.operands[1].bytes();
  if (reduction != "none" && reduction != "add")
    kept += s.operands[0].bytes() + s.operands[2].bytes();
  return withBytes(cost, s, kept);
}
