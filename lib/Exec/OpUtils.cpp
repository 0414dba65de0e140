//===- OpUtils.cpp - Attribute and shape helpers for op dispatch ----------===//

#include "OpUtils.h"
#include "mlir/IR/Location.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

std::string weft::exec::describeOp(mlir::Operation *op) {
  std::string s = op->getName().getStringRef().str();
  if (auto name = op->getLoc().dyn_cast<mlir::NameLoc>())
    s += " (\"" + name.getName().str() + "\")";
  return s;
}

llvm::Error weft::exec::checkIndexRange(mlir::Operation *op,
                                        const Tensor &indices, int64_t limit,
                                        bool allowNegative,
                                        std::optional<int64_t> ignore,
                                        llvm::StringRef what) {
  int64_t low = allowNegative ? -limit : 0;
  for (int64_t i = 0, e = indices.getNumElements(); i < e; ++i) {
    int64_t v = indices.ints()[i];
    if ((v >= low && v < limit) || (ignore && v == *ignore))
      continue;
    return badInput("{0}: {1} {2} at element {3} is out of range [{4}, {5})",
                    describeOp(op), what, v, i, low, limit);
  }
  return llvm::Error::success();
}

Conv2dParams weft::exec::convParams(graph::Conv2dOp op) {
  Conv2dParams p;
  std::copy_n(op.getStrides().begin(), 2, p.strides.begin());
  std::copy_n(op.getPads().begin(), 4, p.pads.begin());
  std::copy_n(op.getDilations().begin(), 2, p.dilations.begin());
  p.group = int64_t(op.getGroup());
  return p;
}

template <typename PoolOp> static PoolParams windowParams(PoolOp op) {
  PoolParams p;
  p.kernel.assign(op.getKernel().begin(), op.getKernel().end());
  p.strides.assign(op.getStrides().begin(), op.getStrides().end());
  p.pads.assign(op.getPads().begin(), op.getPads().end());
  if (std::optional<llvm::ArrayRef<int64_t>> d = op.getDilations())
    p.dilations.assign(d->begin(), d->end());
  return p;
}

PoolParams weft::exec::poolParams(graph::MaxPoolOp op) {
  return windowParams(op);
}

PoolParams weft::exec::poolParams(graph::AvgPoolOp op) {
  PoolParams p = windowParams(op);
  p.excludePad = op.getExcludePad();
  return p;
}

std::optional<UnaryKind> weft::exec::unaryKindOf(mlir::Operation *op) {
  using K = std::optional<UnaryKind>;
  return llvm::TypeSwitch<mlir::Operation *, K>(op)
      .Case([](g::SqrtOp) { return UnaryKind::Sqrt; })
      .Case([](g::RsqrtOp) { return UnaryKind::Rsqrt; })
      .Case([](g::NegOp) { return UnaryKind::Neg; })
      .Case([](g::ReluOp) { return UnaryKind::Relu; })
      .Case([](g::GeluOp) { return UnaryKind::Gelu; })
      .Case([](g::TanhOp) { return UnaryKind::Tanh; })
      .Case([](g::SigmoidOp) { return UnaryKind::Sigmoid; })
      .Case([](g::ErfOp) { return UnaryKind::Erf; })
      .Case([](g::ExpOp) { return UnaryKind::Exp; })
      .Case([](g::LogOp) { return UnaryKind::Log; })
      .Case([](g::SinOp) { return UnaryKind::Sin; })
      .Case([](g::CosOp) { return UnaryKind::Cos; })
      .Case([](g::TanOp) { return UnaryKind::Tan; })
      .Case([](g::AsinOp) { return UnaryKind::Asin; })
      .Case([](g::AcosOp) { return UnaryKind::Acos; })
      .Case([](g::AtanOp) { return UnaryKind::Atan; })
      .Case([](g::SinhOp) { return UnaryKind::Sinh; })
      .Case([](g::CoshOp) { return UnaryKind::Cosh; })
      .Case([](g::AsinhOp) { return UnaryKind::Asinh; })
      .Case([](g::AcoshOp) { return UnaryKind::Acosh; })
      .Case([](g::AtanhOp) { return UnaryKind::Atanh; })
      .Case([](g::FloorOp) { return UnaryKind::Floor; })
      .Case([](g::CeilOp) { return UnaryKind::Ceil; })
      .Case([](g::RoundOp) { return UnaryKind::Round; })
      .Default([](mlir::Operation *) { return std::nullopt; });
}
