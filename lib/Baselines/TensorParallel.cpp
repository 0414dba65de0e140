//===- TensorParallel.cpp - Megatron roles of a model's matmuls -----------===//

#include "TensorParallel.h"
#include "Graph/IR/GraphOps.h"
#include "llvm/ADT/SetVector.h"

using namespace weft;
using namespace weft::baselines;
namespace g = weft::graph;
using mlir::Value;

/// The parameter a value is, or null.
static g::ParameterOp parameterOf(Value v) {
  return v.getDefiningOp<g::ParameterOp>();
}

/// A weight projection: x · W (+ b), W a parameter.
struct Projection {
  g::MatMulOp matmul;
  g::ParameterOp weight, bias;
};

/// Follows `v` back through reshapes and transposes and a bias add to a
/// projection; records the heads of a [..., heads, width] reshape.
static std::optional<Projection> projectionBefore(Value v, int64_t &heads,
                                                  int64_t &width) {
  Projection p;
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (auto r = llvm::dyn_cast<g::ReshapeOp>(def)) {
      auto shape = r.getType().cast<mlir::RankedTensorType>().getShape();
      if (shape.size() >= 2) {
        heads = shape[shape.size() - 2];
        width = shape.back();
      }
      v = r.getInput();
    } else if (auto t = llvm::dyn_cast<g::TransposeOp>(def)) {
      v = t.getInput();
    } else if (auto add = llvm::dyn_cast<g::AddOp>(def)) {
      if (auto b = parameterOf(add.getRhs()))
        p.bias = b, v = add.getLhs();
      else if (auto b = parameterOf(add.getLhs()))
        p.bias = b, v = add.getRhs();
      else
        return std::nullopt;
    } else if (auto mm = llvm::dyn_cast<g::MatMulOp>(def)) {
      p.matmul = mm;
      p.weight = parameterOf(mm.getRhs());
      if (!p.weight)
        return std::nullopt;
      return p;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// The single user of `v`, or null.
static mlir::Operation *onlyUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return *v.getUsers().begin();
}

static bool isElementwise(mlir::Operation *op) {
  return llvm::isa<g::AddOp, g::SubOp, g::MulOp, g::DivOp, g::PowOp, g::ErfOp,
                   g::GeluOp, g::ReluOp, g::TanhOp, g::SigmoidOp, g::DropoutOp,
                   g::NegOp, g::ExpOp, g::SqrtOp, g::ClipOp, g::SinOp, g::CosOp,
                   g::TanOp, g::AsinOp, g::AcosOp, g::AtanOp, g::SinhOp,
                   g::CoshOp, g::AsinhOp, g::AcoshOp, g::AtanhOp, g::FloorOp,
                   g::CeilOp, g::RoundOp>(op);
}

TensorParallelRoles
baselines::findTensorParallelRoles(mlir::func::FuncOp main) {
  TensorParallelRoles roles;
  auto assign = [&](g::ParameterOp p, bool columns, int64_t extent,
                    int64_t align) {
    if (p && !roles.parameters.count(p.getName()))
      roles.parameters[p.getName()] = {columns, extent, align};
  };
  auto assigned = [&](g::ParameterOp p) {
    return p && roles.parameters.count(p.getName());
  };
  // Attention: scores = Q · Kᵀ with both operands activations.
  main.walk([&](g::MatMulOp scores) {
    if (parameterOf(scores.getLhs()) || parameterOf(scores.getRhs()))
      return;
    int64_t heads = 0, width = 0;
    auto q = projectionBefore(scores.getLhs(), heads, width);
    auto k = projectionBefore(scores.getRhs(), heads, width);
    if (!q || !k || heads <= 0)
      return;
    // Scores -> (scale, mask, dropout) -> softmax -> P · V.
    Value v = scores.getResult();
    g::MatMulOp context;
    while (mlir::Operation *user = onlyUser(v)) {
      if (auto mm = llvm::dyn_cast<g::MatMulOp>(user)) {
        context = mm;
        break;
      }
      if (user->getNumResults() != 1)
        break;
      v = user->getResult(0);
    }
    if (!context)
      return;
    int64_t vh = 0, vw = 0;
    auto val = projectionBefore(context.getRhs(), vh, vw);
    // Context -> transpose/reshape -> x · W_o.
    Value c = context.getResult();
    g::MatMulOp out;
    while (mlir::Operation *user = onlyUser(c)) {
      if (auto mm = llvm::dyn_cast<g::MatMulOp>(user)) {
        out = mm;
        break;
      }
      if (!llvm::isa<g::ReshapeOp, g::TransposeOp>(user))
        break;
      c = user->getResult(0);
    }
    if (!val || !out || !parameterOf(out.getRhs()))
      return;
    int64_t hidden = heads * width;
    roles.heads = std::max(roles.heads, heads);
    for (const Projection &p : {*q, *k, *val}) {
      assign(p.weight, true, hidden, width);
      assign(p.bias, true, hidden, width);
    }
    assign(parameterOf(out.getRhs()), false, hidden, width);
    roles.splitExtents.push_back(hidden);
  });
  // Feed-forward pairs: x · W1 (+ b1) -> elementwise ... -> · W2.
  main.walk([&](g::MatMulOp first) {
    g::ParameterOp w1 = parameterOf(first.getRhs());
    if (!w1 || assigned(w1))
      return;
    auto w1Type = w1.getType().cast<mlir::RankedTensorType>();
    if (w1Type.getRank() != 2)
      return;
    int64_t n = w1Type.getDimSize(1);
    llvm::SetVector<Value> chain;
    chain.insert(first.getResult());
    g::ParameterOp bias;
    g::MatMulOp second;
    for (size_t i = 0; i < chain.size() && !second; ++i)
      for (mlir::Operation *user : chain[i].getUsers()) {
        if (auto mm = llvm::dyn_cast<g::MatMulOp>(user)) {
          auto w2 = parameterOf(mm.getRhs());
          if (mm.getLhs() == chain[i] && w2 && !assigned(w2) &&
              w2.getType().cast<mlir::RankedTensorType>().getDimSize(0) == n)
            second = mm;
          continue;
        }
        if (!isElementwise(user) ||
            user->getResult(0).getType() != first.getResult().getType())
          continue;
        if (auto add = llvm::dyn_cast<g::AddOp>(user); add && !bias && i == 0)
          bias = parameterOf(add.getRhs());
        chain.insert(user->getResult(0));
      }
    if (!second)
      return;
    assign(w1, true, n, 1);
    assign(bias, true, n, 1);
    assign(parameterOf(second.getRhs()), false, n, 1);
    roles.splitExtents.push_back(n);
  });
  return roles;
}
