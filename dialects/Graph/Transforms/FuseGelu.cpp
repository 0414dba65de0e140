//===- FuseGelu.cpp - graph-fuse-gelu -------------------------------------===//
//
// Rewrites the erf form of GELU that ONNX exports before opset 20 spell as
// five elementwise ops, x · 0.5 · (1 + erf(x / √2)), into one `graph.gelu`
// (docs/Design.md §3.1). The chain keeps three tensors of x's size for the
// backward pass (the scaled input of erf, x and 1 + erf); `graph.gelu` keeps
// x only, and the search has four positions fewer per occurrence.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "Graph/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include <cmath>
#include <optional>

namespace weft::graph {
#define GEN_PASS_DEF_FUSEGELU
#include "Graph/Transforms/Passes.h.inc"
} // namespace weft::graph

using namespace mlir;
using namespace weft::graph;

namespace {

/// The value of `v` when it is a splat floating-point constant.
std::optional<double> splatValue(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isa<FloatType>())
    return std::nullopt;
  APFloat f = attr.getSplatValue<APFloat>();
  bool losesInfo = false;
  f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

/// Whether `v` is a splat constant within a relative 1e-3 of `expected`
/// (exports round √2 to the element type: bf16 holds it to 3 digits).
bool isSplat(Value v, double expected) {
  std::optional<double> s = splatValue(v);
  return s && std::abs(*s - expected) <= 1e-3 * std::abs(expected);
}

/// The operand of binary op `op` that is not `known`, or null when neither
/// or both are.
template <typename OpT> Value otherOperand(OpT op, Value known) {
  if (op.getLhs() == known && op.getRhs() != known)
    return op.getRhs();
  if (op.getRhs() == known && op.getLhs() != known)
    return op.getLhs();
  return {};
}

/// The single user of `v` when it is an op of type OpT.
template <typename OpT> OpT soleUser(Value v) {
  if (!v.hasOneUse())
    return {};
  return dyn_cast<OpT>(*v.getUsers().begin());
}

/// x when `t` is x / √2 or x · (1/√2) and `t` is used once.
Value unscaledInput(Value t) {
  if (!t.hasOneUse())
    return {};
  if (auto div = t.getDefiningOp<DivOp>())
    return isSplat(div.getRhs(), std::sqrt(2.0)) ? div.getLhs() : Value();
  if (auto mul = t.getDefiningOp<MulOp>()) {
    if (isSplat(mul.getRhs(), 1 / std::sqrt(2.0)))
      return mul.getLhs();
    if (isSplat(mul.getLhs(), 1 / std::sqrt(2.0)))
      return mul.getRhs();
  }
  return {};
}

/// The splat operand's partner when `mul` multiplies by 0.5.
Value halved(MulOp mul) {
  if (isSplat(mul.getRhs(), 0.5))
    return mul.getLhs();
  if (isSplat(mul.getLhs(), 0.5))
    return mul.getRhs();
  return {};
}

/// The op computing x · 0.5 · a from a = 1 + erf(x / √2), in any of the three
/// associations exports use:
///   (x · a) · 0.5    (PyTorch, weft-zoo)
///   x · (a · 0.5)
///   (x · 0.5) · a
MulOp geluProduct(Value x, Value a) {
  MulOp first = soleUser<MulOp>(a);
  if (!first)
    return {};
  Value other = otherOperand(first, a);
  if (!other)
    return {};
  if (other == x) {
    MulOp second = soleUser<MulOp>(first.getResult());
    return second && halved(second) == first.getResult() ? second : MulOp();
  }
  if (halved(first) == a) {
    MulOp second = soleUser<MulOp>(first.getResult());
    return second && otherOperand(second, first.getResult()) == x ? second
                                                                  : MulOp();
  }
  auto half = other.getDefiningOp<MulOp>();
  if (half && other.hasOneUse() && halved(half) == x)
    return first;
  return {};
}

/// The ops of one matched chain, the final product first.
struct GeluChain {
  Value x;
  MulOp product;
  SmallVector<Operation *, 6> ops;
};

/// The chain ending at `erf`'s GELU product, when `erf` is one.
std::optional<GeluChain> matchGelu(ErfOp erf) {
  Value x = unscaledInput(erf.getInput());
  if (!x)
    return std::nullopt;
  AddOp plusOne = soleUser<AddOp>(erf.getResult());
  if (!plusOne || !isSplat(otherOperand(plusOne, erf.getResult()), 1.0))
    return std::nullopt;
  MulOp product = geluProduct(x, plusOne.getResult());
  if (!product || product.getType() != x.getType() ||
      plusOne.getType() != x.getType())
    return std::nullopt;
  GeluChain chain{x, product, {product}};
  for (Value operand : product->getOperands())
    if (auto inner = operand.getDefiningOp<MulOp>(); inner && operand != x)
      chain.ops.push_back(inner);
  chain.ops.append({plusOne, erf, erf.getInput().getDefiningOp()});
  return chain;
}

struct FuseGeluPass : weft::graph::impl::FuseGeluBase<FuseGeluPass> {
  void runOnOperation() override { (void)fuseGelu(getOperation()); }
};

} // namespace

unsigned weft::graph::fuseGelu(func::FuncOp func) {
  SmallVector<ErfOp> erfs;
  func.walk([&](ErfOp erf) { erfs.push_back(erf); });
  unsigned fused = 0;
  OpBuilder builder(func.getContext());
  for (ErfOp erf : erfs) {
    std::optional<GeluChain> chain = matchGelu(erf);
    if (!chain)
      continue;
    builder.setInsertionPoint(chain->product);
    auto gelu = builder.create<GeluOp>(chain->product.getLoc(),
                                       chain->x.getType(), chain->x);
    chain->product.getResult().replaceAllUsesWith(gelu.getResult());
    // Erase the chain, then the constants only it used.
    SmallVector<Operation *> constants;
    for (Operation *op : chain->ops) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && isa<ConstantOp>(def) && !llvm::is_contained(constants, def))
          constants.push_back(def);
      op->erase();
    }
    for (Operation *c : constants)
      if (c->use_empty())
        c->erase();
    ++fused;
  }
  return fused;
}
