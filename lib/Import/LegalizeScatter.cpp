//===- LegalizeScatter.cpp - ScatterElements, Scatter, ScatterND ----------===//

#include "Graph/IR/GraphOps.h"
#include "Importer.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// data, indices, updates, the result type and the reduction of a scatter
/// node.
struct ScatterNode {
  mlir::Value data, indices, updates;
  mlir::RankedTensorType type;
  std::string reduction;
};

llvm::Expected<ScatterNode> scatterNode(NodeContext &ctx) {
  ScatterNode s;
  mlir::Value *slots[] = {&s.data, &s.indices, &s.updates};
  for (unsigned i = 0; i < 3; ++i) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    *slots[i] = *v;
  }
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  s.type = *type;
  s.reduction = ctx.attrString("reduction", "none");
  if (s.reduction != "none" && s.reduction != "add" && s.reduction != "mul" &&
      s.reduction != "max" && s.reduction != "min")
    return ctx.unsupported("reduction '" + s.reduction + "'");
  auto elementOf = [](mlir::Value v) {
    return v.getType().cast<mlir::RankedTensorType>().getElementType();
  };
  if (s.type != s.data.getType())
    return ctx.unsupported("a result of another type than the data");
  if (elementOf(s.updates) != elementOf(s.data))
    return ctx.unsupported("updates of another element type than the data");
  return s;
}

/// ScatterElements (opset 11+) and its older name Scatter (opsets 9, 10).
llvm::Error scatterElements(NodeContext &ctx) {
  auto s = scatterNode(ctx);
  if (!s)
    return s.takeError();
  llvm::ArrayRef<int64_t> data = shapeOf(s->data), idx = shapeOf(s->indices);
  int64_t rank = data.size(), axis = ctx.attrInt("axis", 0);
  if (axis < -rank || axis >= rank)
    return ctx.unsupported("axis " + std::to_string(axis) +
                           " out of range for rank " + std::to_string(rank));
  if (axis < 0)
    axis += rank;
  if (idx != shapeOf(s->updates) || int64_t(idx.size()) != rank)
    return ctx.unsupported("indices and updates of different shapes or of "
                           "another rank than the data");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx[d] > data[d])
      return ctx.unsupported("indices larger than the data in dim " +
                             std::to_string(d));
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(
      0, b.create<g::ScatterElementsOp>(ctx.loc(), s->type, s->data, s->indices,
                                        s->updates, b.getI64IntegerAttr(axis),
                                        b.getStringAttr(s->reduction)));
  return llvm::Error::success();
}

llvm::Error scatterNd(NodeContext &ctx) {
  auto s = scatterNode(ctx);
  if (!s)
    return s.takeError();
  llvm::ArrayRef<int64_t> data = shapeOf(s->data), idx = shapeOf(s->indices);
  int64_t k = idx.empty() ? 0 : idx.back();
  if (k < 1 || k > int64_t(data.size()))
    return ctx.unsupported("index tuples of " + std::to_string(k) +
                           " elements for data of rank " +
                           std::to_string(data.size()));
  llvm::SmallVector<int64_t> updates(idx.drop_back());
  updates.append(data.begin() + k, data.end());
  if (shapeOf(s->updates) != llvm::ArrayRef<int64_t>(updates))
    return ctx.unsupported("updates of another shape than indices and data "
                           "give");
  mlir::OpBuilder &b = ctx.builder();
  ctx.setResult(0, b.create<g::ScatterNdOp>(ctx.loc(), s->type, s->data,
                                            s->indices, s->updates,
                                            b.getStringAttr(s->reduction)));
  return llvm::Error::success();
}

} // namespace

void import::registerScatterHandlers(HandlerTable &t) {
  t["ScatterElements"] = scatterElements;
  t["Scatter"] = scatterElements;
  t["ScatterND"] = scatterNd;
}
