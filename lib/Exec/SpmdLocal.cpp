//===- SpmdLocal.cpp - Variants of an spmd.local and per-device clones ----===//

#include "OpUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <set>
#include <vector>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::AxisDist;
using spmd::DistAttr;
using spmd::ShardGeometry;

namespace {

bool layoutMatches(const g::AxisLayout &l, const AxisDist &e) {
  switch (l.kind) {
  case g::AxisLayout::Kind::Identity:
    return e.isIdentity();
  case g::AxisLayout::Kind::Gather:
    return e.isGather() && e.dim == l.dim;
  case g::AxisLayout::Kind::Reduce:
    return l.combiner == g::Combiner::Sum ? e.kind == AxisDist::Kind::Sum
                                          : e.kind == AxisDist::Kind::Max;
  }
  return false;
}

/// The recipe part of a variant name ("split-batch" of "matmul.split-batch").
llvm::StringRef recipeOf(llvm::StringRef name) {
  return name.split('.').second;
}

} // namespace

/// Whether `v` fits the distributions on `axis`.
static bool variantMatches(const g::ShardingVariant &v,
                           llvm::ArrayRef<DistAttr> operandDists,
                           llvm::ArrayRef<DistAttr> resultDists,
                           unsigned axis) {
  if (v.operands.size() != operandDists.size() ||
      v.results.size() != resultDists.size())
    return false;
  for (auto [l, d] : llvm::zip(v.operands, operandDists))
    if (!layoutMatches(l, d.getAxes()[axis]))
      return false;
  for (auto [l, d] : llvm::zip(v.results, resultDists))
    if (!layoutMatches(l, d.getAxes()[axis]))
      return false;
  return true;
}

/// Shard shapes adjusted attributes of the clone for device `x`.
static mlir::DictionaryAttr
localAttributes(mlir::Operation *inner, llvm::ArrayRef<Shape> inShapes,
                llvm::ArrayRef<Shape> outShapes,
                llvm::ArrayRef<spmd::ShardBox> outBoxes) {
  mlir::MLIRContext *ctx = inner->getContext();
  mlir::NamedAttrList attrs(inner->getAttrDictionary());
  if (auto s = llvm::dyn_cast<g::SliceOp>(inner)) {
    Shape inGlobal = shapeOf(s.getInput()), outGlobal = shapeOf(s.getResult());
    llvm::SmallVector<int64_t> starts(s.getStarts()), limits(s.getLimits()),
        steps(s.getSteps());
    for (size_t d = 0; d < starts.size() && d < inGlobal.size(); ++d) {
      int64_t inLocal = inShapes[0][d], outLocal = outShapes[0][d];
      if (inLocal == inGlobal[d] && outLocal != outGlobal[d]) {
        // slice.split-sliced: this device's part of the window.
        starts[d] = starts[d] + outBoxes[0].offsets[d] * steps[d];
        limits[d] = starts[d] + outLocal * steps[d];
      } else if (inLocal != inGlobal[d]) {
        // slice.split: the dim is kept whole; the window is the shard.
        starts[d] = 0;
        limits[d] = inLocal;
        steps[d] = 1;
      }
    }
    attrs.set("starts", mlir::DenseI64ArrayAttr::get(ctx, starts));
    attrs.set("limits", mlir::DenseI64ArrayAttr::get(ctx, limits));
    attrs.set("steps", mlir::DenseI64ArrayAttr::get(ctx, steps));
  }
  if (llvm::isa<g::Conv2dOp>(inner) && inShapes.size() >= 2 &&
      inShapes[0].size() > 1 && inShapes[1].size() > 1 && inShapes[1][1] > 0 &&
      inShapes[0][1] % inShapes[1][1] == 0 && inShapes[0][1] > 0) {
    // conv2d.split-groups: the group count of the device's channels.
    int64_t groups = inShapes[0][1] / inShapes[1][1];
    attrs.set("group",
              mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64), groups));
  }
  if (llvm::isa<g::ConvTranspose2dOp>(inner) && inShapes.size() >= 2 &&
      inShapes[1].size() > 1 && inShapes[1][1] > 0 && outShapes[0][1] > 0 &&
      outShapes[0][1] % inShapes[1][1] == 0) {
    // conv_transpose2d.split-groups: result channels / (O/group).
    int64_t groups = outShapes[0][1] / inShapes[1][1];
    attrs.set("group",
              mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64), groups));
  }
  return attrs.getDictionary(ctx);
}

llvm::Error weft::exec::prepareLocal(LocalStep &step,
                                     const ShardGeometry &geometry,
                                     mlir::Block &scratch) {
  auto local = llvm::cast<spmd::LocalOp>(step.local);
  mlir::Block &body = local.getBody().front();
  mlir::Operation *inner = nullptr;
  for (mlir::Operation &op : body) {
    if (llvm::isa<spmd::YieldOp>(op))
      continue;
    if (inner)
      return badInput("{0}: an spmd.local holds more than one graph op",
                      describeOp(&op));
    inner = &op;
  }
  if (!inner)
    return badInput("an spmd.local at {0} holds no graph op",
                    describeOp(step.local));
  step.inner = inner;
  auto yield = llvm::cast<spmd::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != inner->getNumResults() ||
      llvm::any_of(llvm::zip(yield.getOperands(), inner->getResults()),
                   [](auto p) { return std::get<0>(p) != std::get<1>(p); }))
    return badInput("{0}: the spmd.local must yield its graph op's results "
                    "in order",
                    describeOp(inner));
  // Operand and result distributions.
  llvm::SmallVector<DistAttr, 4> operandDists, resultDists;
  llvm::SmallVector<unsigned, 4> operandIndex;
  for (mlir::Value v : inner->getOperands()) {
    auto arg = v.dyn_cast<mlir::BlockArgument>();
    if (!arg || arg.getOwner() != &body)
      return badInput("{0}: operands of a local's graph op must be the "
                      "region's arguments",
                      describeOp(inner));
    unsigned j = arg.getArgNumber();
    operandIndex.push_back(j);
    DistAttr d = spmd::getDist(local.getOperand(j));
    if (!d)
      return badInput("{0}: operand {1} has no distribution", describeOp(inner),
                      j);
    operandDists.push_back(d);
  }
  mlir::ArrayAttr dists = local.getDists();
  if (!dists || dists.size() != local.getNumResults())
    return badInput("{0}: the spmd.local needs one dist per result",
                    describeOp(inner));
  for (mlir::Attribute a : dists) {
    auto d = a.dyn_cast<DistAttr>();
    if (!d || d.getAxes().size() != geometry.numAxes())
      return badInput("{0}: a result dist has the wrong number of axes",
                      describeOp(inner));
    resultDists.push_back(d);
  }
  for (DistAttr d : operandDists)
    if (d.getAxes().size() != geometry.numAxes())
      return badInput("{0}: an operand dist has the wrong number of axes",
                      describeOp(inner));

  step.operandDists = operandDists;
  step.resultDists = resultDists;
  // Variants, one per axis.
  auto iface = llvm::dyn_cast<g::ShardingRuleOpInterface>(inner);
  if (!iface)
    return badInput("{0}: the op has no sharding rules", describeOp(inner));
  llvm::SmallVector<g::ShardingVariant, 8> all;
  iface.getShardingVariants(all);
  llvm::SmallVector<llvm::StringRef, 4> names;
  llvm::SplitString(local.getVariant(), names, ",");
  for (llvm::StringRef &n : names)
    n = n.trim();
  step.variants.clear();
  if (names.size() != geometry.numAxes())
    return badInput("{0}: variant '{1}' names {2} rules for a mesh of {3} "
                    "axes (one per axis, joined by \", \")",
                    describeOp(inner), local.getVariant(), names.size(),
                    geometry.numAxes());
  for (unsigned a = 0; a < geometry.numAxes(); ++a) {
    // The named rule; of several with that name (one per dim), the one
    // whose layouts fit the distributions, else the first: the recipe is
    // what the plan says, and a plan whose distributions disagree with it
    // shows up numerically.
    const g::ShardingVariant *chosen = nullptr, *byName = nullptr;
    for (const g::ShardingVariant &v : all) {
      if (v.name != names[a])
        continue;
      if (!byName)
        byName = &v;
      if (variantMatches(v, operandDists, resultDists, a)) {
        chosen = &v;
        break;
      }
    }
    if (!chosen)
      chosen = byName;
    if (!chosen)
      return badInput("{0}: '{1}' (mesh axis {2}) is not a sharding rule of "
                      "the op",
                      describeOp(inner), names[a], a);
    step.variants.push_back(*chosen);
  }

  // Recipes.
  step.onceAxes.assign(inner->getNumOperands(), 0);
  step.reducedAxes = step.batchAxes = 0;
  step.special = LocalStep::Special::None;
  using S = LocalStep::Special;
  for (auto [a, v] : llvm::enumerate(step.variants)) {
    spmd::MeshAxes bit = 1u << a;
    for (unsigned i : v.onceOperands)
      if (i < step.onceAxes.size())
        step.onceAxes[i] |= bit;
    llvm::StringRef recipe = recipeOf(v.name);
    auto mark = [&](S s, bool batch = false) {
      step.special = s;
      (batch ? step.batchAxes : step.reducedAxes) |= bit;
    };
    if (llvm::isa<g::SoftmaxOp>(inner) && recipe == "split-reduced")
      mark(S::Softmax);
    else if (llvm::isa<g::LogSoftmaxOp>(inner) && recipe == "split-reduced")
      mark(S::LogSoftmax);
    else if (llvm::isa<g::LayerNormOp>(inner) && recipe == "split-normalized")
      mark(S::LayerNorm);
    else if (llvm::isa<g::BatchNormOp>(inner) &&
             recipe == "split-batch-sync-stats")
      mark(S::BatchNorm);
    else if (llvm::isa<g::CrossEntropyOp, g::NllLossOp>(inner) &&
             recipe == "split-classes")
      mark(S::Loss);
    else if (llvm::isa<g::CrossEntropyOp, g::NllLossOp>(inner) &&
             recipe == "split-batch")
      mark(S::Loss, /*batch=*/true);
    else if (llvm::isa<g::GatherOp>(inner) && recipe == "split-vocab")
      mark(S::GatherVocab);
    else if (llvm::isa<g::ReduceMeanOp>(inner) && recipe == "split-reduced")
      mark(S::ReduceMean);
  }
  if (llvm::isa<g::ConstantOp>(inner))
    step.special = S::Constant;

  // Per-device clones with shard types.
  for (mlir::Operation *c : step.clones)
    c->destroy();
  step.clones.clear();
  mlir::Location loc = inner->getLoc();
  for (unsigned x = 0; x < geometry.numDevices(); ++x) {
    llvm::SmallVector<Shape, 4> inShapes, outShapes;
    llvm::SmallVector<spmd::ShardBox, 2> outBoxes;
    llvm::SmallVector<mlir::Value, 4> args;
    for (auto [v, d] : llvm::zip(inner->getOperands(), operandDists)) {
      auto type = v.getType().cast<mlir::RankedTensorType>();
      spmd::ShardBox box = geometry.shardBox(type.getShape(), d, x);
      inShapes.push_back(box.extents);
      args.push_back(scratch.addArgument(
          mlir::RankedTensorType::get(box.extents, type.getElementType()),
          loc));
    }
    llvm::SmallVector<mlir::Type, 2> resultTypes;
    for (auto [r, d] : llvm::zip(inner->getResults(), resultDists)) {
      auto type = r.getType().cast<mlir::RankedTensorType>();
      spmd::ShardBox box = geometry.shardBox(type.getShape(), d, x);
      outShapes.push_back(box.extents);
      outBoxes.push_back(box);
      resultTypes.push_back(
          mlir::RankedTensorType::get(box.extents, type.getElementType()));
    }
    mlir::OperationState state(loc, inner->getName());
    state.addOperands(args);
    state.addTypes(resultTypes);
    state.addAttributes(
        localAttributes(inner, inShapes, outShapes, outBoxes).getValue());
    step.clones.push_back(mlir::Operation::create(state));
  }
  return llvm::Error::success();
}

/// Checks the clone of device `x` with the op's verifier (shapes of the
/// shards fit the op); the error is a verification failure (exit code 3).
static llvm::Error verifyClone(LocalStep &step, unsigned x) {
  mlir::Operation *clone = step.clones[x];
  std::string message;
  {
    mlir::ScopedDiagnosticHandler handler(clone->getContext(),
                                          [&](mlir::Diagnostic &diag) {
                                            if (message.empty())
                                              message = diag.str();
                                            return mlir::success();
                                          });
    if (mlir::succeeded(mlir::verify(clone)))
      return llvm::Error::success();
  }
  return makeError(
      ExitVerifyFailed,
      "{0}: the recipe '{1}' cannot run on device {2}'s shards: "
      "{3}",
      describeOp(step.inner),
      step.local->getAttrOfType<mlir::StringAttr>("variant").getValue(), x,
      message);
}

llvm::Error weft::exec::verifyLocalClones(LocalStep &step) {
  // A constant's recipe cuts the value itself; its clone is not run.
  if (step.special == LocalStep::Special::Constant)
    return llvm::Error::success();
  // Clones alike in operand and result types and attributes (uniqued, so
  // compared by pointer) verify alike: each kind is verified at its first
  // device, as a device-by-device pass would first fail there. A mesh of
  // thousands of devices has a few kinds per op.
  std::set<std::vector<const void *>> verified;
  for (unsigned x = 0; x < step.clones.size(); ++x) {
    mlir::Operation *clone = step.clones[x];
    std::vector<const void *> kind{
        clone->getAttrDictionary().getAsOpaquePointer()};
    for (mlir::Type t : clone->getOperandTypes())
      kind.push_back(t.getAsOpaquePointer());
    kind.push_back(nullptr);
    for (mlir::Type t : clone->getResultTypes())
      kind.push_back(t.getAsOpaquePointer());
    if (!verified.insert(std::move(kind)).second)
      continue;
    if (auto err = verifyClone(step, x))
      return err;
  }
  return llvm::Error::success();
}
