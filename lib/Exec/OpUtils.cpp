//===- OpUtils.cpp - Attribute and shape helpers for op dispatch ----------===//

#include "OpUtils.h"
#include "mlir/IR/Location.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::exec;

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
