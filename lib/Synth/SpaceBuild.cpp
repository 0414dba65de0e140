//===- SpaceBuild.cpp - Building a SearchSpace from a graph program -------===//
//
// The order, values, options and cost tables of a SearchSpace, and the
// tables its transitions and bounds read: live sets, useful distributions,
// memory floors (the bound's own tables: lib/Synth/TreeBound.cpp). Costs
// come from the evaluator's functions: op work from the graph
// CostOpInterface at shard shapes (costTermsOf, opTime), collectives from
// lib/Eval's CollectivePricer on lib/Cost. docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphInterfaces.h"
#include "Graph/IR/GraphOps.h"
#include "SpaceImpl.h"
#include "TreeBound.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Spmd/RecipeStats.h"
#include "weft/Spmd/Relayout.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/DenseSet.h"
#include <cmath>
#include <numeric>
#include <set>

using namespace weft;
using namespace weft::synth;
using spmd::AxisDist;
using spmd::DistAttr;

SearchSpace::SearchSpace()
    : impl_(std::make_unique<Impl>()),
      bound_(std::make_unique<TreeBound>(*this)) {}
SearchSpace::~SearchSpace() = default;

namespace weft::synth {
/// Builds a SearchSpace (friend of the class).
struct SpaceBuilder {
  SearchSpace &s;
  SearchSpace::Impl &impl;
  mlir::MLIRContext *ctx;
  llvm::DenseMap<mlir::Value, unsigned> valueIds;
  std::map<int64_t, int64_t> segmentOfExtent;
  /// The first position of each kind of op (makeOptions).
  std::map<std::vector<const void *>, unsigned> alikeOps;

  int64_t segmentFor(int64_t extent) {
    auto [it, inserted] =
        segmentOfExtent.try_emplace(extent, int64_t(segmentOfExtent.size()));
    return it->second;
  }

  unsigned typeId(mlir::Type t) {
    auto [it, inserted] = impl.typeIds.try_emplace(t, impl.types.size());
    if (inserted)
      impl.types.push_back(t.cast<mlir::RankedTensorType>());
    return it->second;
  }

  /// The values and the order of the ops of `func`.
  llvm::Error collect(mlir::func::FuncOp func);
  /// A value of the program (its type static).
  llvm::Error addValue(mlir::Value v, ValueInfo::Kind kind, int defPos,
                       std::string name);
  /// Parameters and buffers as values; the other ops in program order
  /// (`nonLeaf`), those computed from leaves alone in `lazy`.
  llvm::Error collectLeaves(mlir::func::FuncOp func,
                            std::vector<mlir::Operation *> &nonLeaf,
                            llvm::DenseSet<mlir::Operation *> &lazy);
  /// The search's order: lazy ops just before their first user.
  std::vector<mlir::Operation *>
  orderOps(llvm::ArrayRef<mlir::Operation *> nonLeaf,
           const llvm::DenseSet<mlir::Operation *> &lazy);
  /// The ops in `order` with their results and the uses of their operands.
  llvm::Error addOps(llvm::ArrayRef<mlir::Operation *> order);
  llvm::Error makeMesh(const ClusterSpec &spec, llvm::ArrayRef<double> ratios);
  /// The options of op p and their costs.
  llvm::Error makeOptions(unsigned p);
  /// Op p takes the options of the first op alike (same options by
  /// construction); false when it is the first.
  bool takeAlike(unsigned p);
  /// The distributions `option` (its variant per axis set) needs of the
  /// op's operands and gives its results; false when one is invalid.
  bool distsOf(const OpInfo &info,
               llvm::ArrayRef<graph::ShardingVariant> variants,
               OpOption &option);
  /// Per representative: compute, recipe all-reduces, kept and produced
  /// bytes of `option`.
  void priceOption(OpInfo &info,
                   llvm::ArrayRef<graph::ShardingVariant> variants,
                   OpOption &option);
  /// Seconds of the recipe's all-reduces on the group of mesh device `rep`.
  double recipeSeconds(const OpInfo &info, const OpOption &option,
                       llvm::ArrayRef<spmd::RecipeStat> stats, unsigned rep,
                       bool grad);
  /// The tables read after building, in an order that interns
  /// distributions and held sets as the searches expect (ids break no ties,
  /// but the same ids keep runs comparable).
  void finish(bool bounds);
  /// Per position, the live values in order of availability.
  void liveSets();
  /// heuristic(p) before the bound's tables: per representative Σ over
  /// positions >= p of the cheapest compute, the largest.
  void computeBound();
  void capacities();
  /// Per value and remaining uses, the distributions they may require.
  void usefulDists();
  /// Per op the least (kept + first-use storage) over its options, summed
  /// from the end.
  void memoryFloors();
};
} // namespace weft::synth

double SpaceBuilder::recipeSeconds(const OpInfo &info, const OpOption &option,
                                   llvm::ArrayRef<spmd::RecipeStat> stats,
                                   unsigned rep, bool grad) {
  double seconds = 0;
  for (const spmd::RecipeStat &stat : stats) {
    auto bytesOf = [&](unsigned d) {
      llvm::SmallVector<int64_t, 4> shard;
      if (stat.operand >= 0) {
        unsigned v = info.operands[stat.operand];
        shard =
            impl.layout->shardShape(impl.types[s.values_[v].typeId],
                                    s.dist(option.operands[stat.operand]), d);
      }
      return spmd::statElements(stat, shard) *
             impl.elementBytes(impl.types[s.values_[info.operands[0]].typeId]);
    };
    double t = impl.priceAlong(spmd::Collective::AllReduce, 1u << stat.axis,
                               rep, bytesOf);
    seconds += grad && stat.hasDual ? 2 * t : t;
  }
  return seconds;
}

llvm::Error SpaceBuilder::addValue(mlir::Value v, ValueInfo::Kind kind,
                                   int defPos, std::string name) {
  auto type = v.getType().dyn_cast<mlir::RankedTensorType>();
  if (!type || !type.hasStaticShape())
    return badInput("synthesis needs static tensor types; '{0}' has none",
                    name.empty() ? std::string("a value") : name);
  ValueInfo info;
  info.kind = kind;
  info.value = v;
  info.typeId = typeId(type);
  info.shape.assign(type.getShape().begin(), type.getShape().end());
  info.isFloat = type.getElementType().isa<mlir::FloatType>();
  info.defPos = defPos;
  info.name = std::move(name);
  valueIds[v] = s.values_.size();
  s.values_.push_back(std::move(info));
  return llvm::Error::success();
}

llvm::Error SpaceBuilder::collect(mlir::func::FuncOp func) {
  for (mlir::BlockArgument arg : func.getArguments()) {
    std::string name;
    if (auto n = func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(),
                                                         "graph.input"))
      name = n.getValue().str();
    if (auto err = addValue(arg, ValueInfo::Kind::Input, -1, name))
      return err;
  }
  // The order: the program's ops, except that ops computed from leaves
  // alone (constants, views of parameters) are placed just before their
  // first user, so that repeated blocks have repeated live sets.
  std::vector<mlir::Operation *> nonLeaf;
  llvm::DenseSet<mlir::Operation *> lazy;
  if (auto err = collectLeaves(func, nonLeaf, lazy))
    return err;
  if (auto err = addOps(orderOps(nonLeaf, lazy)))
    return err;
  for (ValueInfo &v : s.values_)
    v.availableAt = v.defPos >= 0    ? unsigned(v.defPos + 1)
                    : v.uses.empty() ? ~0u
                                     : v.uses.front() + 1;
  return llvm::Error::success();
}

llvm::Error
SpaceBuilder::collectLeaves(mlir::func::FuncOp func,
                            std::vector<mlir::Operation *> &nonLeaf,
                            llvm::DenseSet<mlir::Operation *> &lazy) {
  for (mlir::Operation &op : func.getBody().front()) {
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    if (auto p = llvm::dyn_cast<graph::ParameterOp>(op)) {
      if (auto err = addValue(p.getResult(), ValueInfo::Kind::Parameter, -1,
                              p.getName().str()))
        return err;
      s.values_.back().grad = true;
      continue;
    }
    if (auto b = llvm::dyn_cast<graph::BufferOp>(op)) {
      if (auto err = addValue(b.getResult(), ValueInfo::Kind::Buffer, -1,
                              b.getName().str()))
        return err;
      continue;
    }
    if (!llvm::isa<graph::ShardingRuleOpInterface>(op) ||
        !llvm::isa<graph::CostOpInterface>(op))
      return badInput("synthesis does not know '{0}'",
                      op.getName().getStringRef().str());
    bool leafOnly = llvm::all_of(op.getOperands(), [&](mlir::Value v) {
      mlir::Operation *def = v.getDefiningOp();
      return def && (llvm::isa<graph::ParameterOp, graph::BufferOp>(def) ||
                     lazy.contains(def));
    });
    if (leafOnly)
      lazy.insert(&op);
    nonLeaf.push_back(&op);
  }
  return llvm::Error::success();
}

std::vector<mlir::Operation *>
SpaceBuilder::orderOps(llvm::ArrayRef<mlir::Operation *> nonLeaf,
                       const llvm::DenseSet<mlir::Operation *> &lazy) {
  llvm::DenseSet<mlir::Operation *> placed;
  std::vector<mlir::Operation *> order;
  std::function<void(mlir::Operation *)> place = [&](mlir::Operation *op) {
    if (!placed.insert(op).second)
      return;
    for (mlir::Value v : op->getOperands())
      if (mlir::Operation *def = v.getDefiningOp())
        if (lazy.contains(def))
          place(def);
    order.push_back(op);
  };
  for (mlir::Operation *op : nonLeaf)
    if (!lazy.contains(op))
      place(op);
  for (mlir::Operation *op : nonLeaf)
    place(op);
  return order;
}

llvm::Error SpaceBuilder::addOps(llvm::ArrayRef<mlir::Operation *> order) {
  for (auto [p, op] : llvm::enumerate(order)) {
    OpInfo info;
    info.op = op;
    bool grad = false;
    for (mlir::Value v : op->getOperands()) {
      unsigned id = valueIds.lookup(v);
      info.operands.push_back(id);
      grad |= s.values_[id].grad;
      auto &uses = s.values_[id].uses;
      if (uses.empty() || uses.back() != p)
        uses.push_back(p);
    }
    for (mlir::Value r : op->getResults()) {
      if (auto err = addValue(r, ValueInfo::Kind::Op, int(p), ""))
        return err;
      s.values_.back().grad = grad && s.values_.back().isFloat;
      info.results.push_back(s.values_.size() - 1);
    }
    s.ops_.push_back(std::move(info));
  }
  return llvm::Error::success();
}

llvm::Error SpaceBuilder::makeMesh(const ClusterSpec &spec,
                                   llvm::ArrayRef<double> ratios) {
  DType dtype = impl.eval.dtype;
  int64_t k = 0;
  for (const Node &n : spec.nodes)
    k = std::gcd<int64_t>(k, n.numDevices);
  k = std::max<int64_t>(k, 1);
  std::vector<llvm::SmallVector<int64_t>> nodesOfClass(spec.classes.size());
  std::vector<unsigned> classOfMeshNode;
  for (const Node &n : spec.nodes) {
    unsigned cls = spec.classOf(n.firstDevice).id;
    for (unsigned r = 0; r < n.numDevices / k; ++r) {
      nodesOfClass[cls].push_back(classOfMeshNode.size());
      classOfMeshNode.push_back(cls);
    }
  }
  llvm::SmallVector<mlir::Attribute> classes;
  std::vector<double> devicesOfClass;
  for (const DeviceClass &c : spec.classes) {
    const DeviceType &type = spec.deviceTypes[c.typeIndex];
    classes.push_back(spmd::DeviceClassAttr::get(
        ctx, type.name, std::llround(type.peakFlops(dtype) / 1e9),
        std::llround(type.memoryGB * 1000),
        mlir::DenseI64ArrayAttr::get(ctx, nodesOfClass[c.id])));
    devicesOfClass.push_back(double(nodesOfClass[c.id].size() * k));
  }
  s.mesh_ = spmd::MeshAttr::get(ctx, mlir::DenseI64ArrayAttr::get(ctx, {k}),
                                mlir::ArrayAttr::get(ctx, classes));
  s.axisSizes_ = {int64_t(classOfMeshNode.size()), k};
  if (ratios.empty()) {
    double total = 0;
    for (auto [i, c] : llvm::enumerate(spec.classes)) {
      double w = spec.deviceTypes[c.typeIndex].peakFlops(dtype);
      s.ratios_.push_back(w);
      total += w * devicesOfClass[i];
    }
    for (double &r : s.ratios_)
      r /= total;
  } else {
    if (ratios.size() != spec.classes.size())
      return badInput("{0} ratios given for {1} device classes", ratios.size(),
                      spec.classes.size());
    s.ratios_.assign(ratios.begin(), ratios.end());
  }
  // Representatives: the first device of the first mesh node of each class
  // (a class is one device type in one node shape with one set of links).
  for (auto [cls, nodes] : llvm::enumerate(nodesOfClass)) {
    if (nodes.empty())
      continue;
    s.repDevices_.push_back(unsigned(nodes.front() * k));
    s.repWeight_.push_back(unsigned(nodes.size() * k));
  }
  return llvm::Error::success();
}

/// The distribution of one tensor from one layout per axis.
static std::optional<DistAttr>
distFrom(mlir::MLIRContext *ctx, llvm::ArrayRef<graph::AxisLayout> perAxis,
         llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axisSizes,
         llvm::function_ref<int64_t(int64_t)> segmentFor) {
  llvm::SmallVector<AxisDist, 4> entries;
  llvm::SmallVector<int64_t, 4> ways(shape.size(), 1), align(shape.size(), 1);
  for (auto [a, l] : llvm::enumerate(perAxis)) {
    switch (l.kind) {
    case graph::AxisLayout::Kind::Identity:
      entries.push_back(AxisDist::identity());
      break;
    case graph::AxisLayout::Kind::Reduce:
      entries.push_back(l.combiner == graph::Combiner::Max ? AxisDist::max()
                                                           : AxisDist::sum());
      break;
    case graph::AxisLayout::Kind::Gather:
      if (l.dim < 0 || l.dim >= int64_t(shape.size()))
        return std::nullopt;
      entries.push_back(AxisDist::gather(l.dim, segmentFor(shape[l.dim])));
      ways[l.dim] *= axisSizes[a];
      align[l.dim] = std::max(align[l.dim], l.align);
      break;
    }
  }
  // Validity filters: no split of a size-1 dim nor of a dim with fewer
  // units than devices along its axes.
  for (unsigned d = 0; d < shape.size(); ++d)
    if (ways[d] > 1 && (shape[d] < 2 || shape[d] / align[d] < ways[d]))
      return std::nullopt;
  DistAttr dist = DistAttr::get(ctx, entries);
  if (!spmd::isStructurallyValid(dist))
    return std::nullopt;
  return dist;
}

bool SpaceBuilder::takeAlike(unsigned p) {
  OpInfo &info = s.ops_[p];
  mlir::Operation *op = info.op;
  // An op's options are a function of its name, attributes, operand and
  // result types and whether a gradient flows through it (the sharding
  // rules read nothing else; segments follow extents): the ops of repeated
  // layers take the first alike op's.
  bool anyGrad = llvm::any_of(info.operands,
                              [&](unsigned v) { return s.values_[v].grad; });
  std::vector<const void *> kind{
      op->getName().getAsOpaquePointer(),
      op->getAttrDictionary().getAsOpaquePointer(),
      reinterpret_cast<const void *>(uintptr_t(anyGrad))};
  for (mlir::Type t : op->getOperandTypes())
    kind.push_back(t.getAsOpaquePointer());
  for (mlir::Type t : op->getResultTypes())
    kind.push_back(t.getAsOpaquePointer());
  auto [alike, fresh] = alikeOps.try_emplace(std::move(kind), p);
  if (fresh)
    return false;
  const OpInfo &first = s.ops_[alike->second];
  info.variantNames = first.variantNames;
  info.options = first.options;
  info.minCompute = first.minCompute;
  info.grad = first.grad;
  return true;
}

bool SpaceBuilder::distsOf(const OpInfo &info,
                           llvm::ArrayRef<graph::ShardingVariant> variants,
                           OpOption &option) {
  mlir::Operation *op = info.op;
  unsigned numAxes = s.numAxes();
  auto segFor = [&](int64_t e) { return segmentFor(e); };
  // Operands, then results, each interned as made (the first invalid one
  // ends the option).
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    llvm::SmallVector<graph::AxisLayout, 4> perAxis;
    for (unsigned a = 0; a < numAxes; ++a) {
      const auto &v = variants[option.perAxis[a]];
      perAxis.push_back(i < v.operands.size() ? v.operands[i]
                                              : graph::AxisLayout());
    }
    auto d = distFrom(ctx, perAxis, s.values_[info.operands[i]].shape,
                      s.axisSizes_, segFor);
    if (!d)
      return false;
    option.operands.push_back(s.intern(*d));
  }
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    llvm::SmallVector<graph::AxisLayout, 4> perAxis;
    for (unsigned a = 0; a < numAxes; ++a) {
      const auto &v = variants[option.perAxis[a]];
      perAxis.push_back(i < v.results.size() ? v.results[i]
                                             : graph::AxisLayout());
    }
    auto d = distFrom(ctx, perAxis, s.values_[info.results[i]].shape,
                      s.axisSizes_, segFor);
    if (!d)
      return false;
    option.results.push_back(s.intern(*d));
  }
  return true;
}

void SpaceBuilder::priceOption(OpInfo &info,
                               llvm::ArrayRef<graph::ShardingVariant> variants,
                               OpOption &option) {
  mlir::Operation *op = info.op;
  bool grad = info.grad;
  auto cop = llvm::cast<graph::CostOpInterface>(op);
  llvm::SmallVector<const graph::ShardingVariant *, 4> chosen;
  for (unsigned a = 0; a < s.numAxes(); ++a)
    chosen.push_back(&variants[option.perAxis[a]]);
  llvm::SmallVector<spmd::RecipeStat, 2> stats =
      spmd::recipeStats(op, chosen, s.axisSizes_);
  for (auto [r, rep] : llvm::enumerate(s.repDevices_)) {
    const DeviceType &type = impl.layout->typeOf(rep);
    graph::ShardShapes shapes;
    for (auto [i, v] : llvm::enumerate(info.operands)) {
      graph::TensorShape t =
          graph::TensorShape::of(s.values_[v].value.getType());
      t.dims = impl.layout->shardShape(impl.types[s.values_[v].typeId],
                                       s.dist(option.operands[i]), rep);
      shapes.operands.push_back(t);
    }
    double produced = 0;
    for (auto [i, v] : llvm::enumerate(info.results)) {
      auto type = impl.types[s.values_[v].typeId];
      graph::TensorShape t = graph::TensorShape::of(type);
      t.dims = impl.layout->shardShape(type, s.dist(option.results[i]), rep);
      produced += double(t.numElements()) * impl.elementBytes(type);
      shapes.results.push_back(t);
    }
    OpCostTerms terms = costTermsOf(cop, shapes, impl.eval.dtype);
    double seconds = 0, kept = 0, forward = 0;
    if (terms.forward.flops != 0 || terms.forward.bytes != 0) {
      seconds = opTime(type, impl.eval.dtype, terms.forward, impl.eval.profile)
                    .seconds;
      forward = seconds;
      if (grad) {
        seconds +=
            opTime(type, impl.eval.dtype, terms.backward, impl.eval.profile)
                .seconds;
        kept = terms.keptBytes;
      }
    }
    option.compute.push_back(seconds);
    option.forward.push_back(forward);
    option.recipeComm.push_back(recipeSeconds(info, option, stats, rep, grad));
    option.recipeForward.push_back(
        stats.empty() ? 0 : recipeSeconds(info, option, stats, rep, false));
    option.kept.push_back(kept);
    option.produced.push_back(produced);
    info.minCompute[r] = std::min(info.minCompute[r], seconds);
  }
}

llvm::Error SpaceBuilder::makeOptions(unsigned p) {
  if (takeAlike(p))
    return llvm::Error::success();
  OpInfo &info = s.ops_[p];
  mlir::Operation *op = info.op;
  llvm::SmallVector<graph::ShardingVariant, 8> variants;
  llvm::cast<graph::ShardingRuleOpInterface>(op).getShardingVariants(variants);
  unsigned replicate = ~0u;
  for (auto [i, v] : llvm::enumerate(variants)) {
    info.variantNames.push_back(v.name);
    if (llvm::StringRef(v.name).endswith(".replicate"))
      replicate = i;
  }
  if (replicate == ~0u)
    return badInput("'{0}' has no replicate variant",
                    op->getName().getStringRef().str());
  unsigned numAxes = s.numAxes();
  info.grad = llvm::any_of(info.operands,
                           [&](unsigned v) { return s.values_[v].grad; });
  std::set<
      std::pair<llvm::SmallVector<DistId, 4>, llvm::SmallVector<DistId, 2>>>
      seen;
  // One variant per axis; an axis of size 1 replicates.
  llvm::SmallVector<uint16_t, 4> idx(numAxes, 0);
  auto allowed = [&](unsigned axis) -> unsigned {
    return s.axisSizes_[axis] > 1 ? variants.size() : 1;
  };
  auto pick = [&](unsigned axis, unsigned i) -> unsigned {
    return s.axisSizes_[axis] > 1 ? i : replicate;
  };
  info.minCompute.assign(s.numReps(), std::numeric_limits<double>::infinity());
  while (true) {
    OpOption option;
    for (unsigned a = 0; a < numAxes; ++a)
      option.perAxis.push_back(pick(a, idx[a]));
    if (distsOf(info, variants, option) &&
        seen.insert({option.operands, option.results}).second) {
      priceOption(info, variants, option);
      info.options.push_back(std::move(option));
    }
    // Next combination (axis 0 slowest: deterministic order).
    int a = int(numAxes) - 1;
    while (a >= 0 && ++idx[a] >= allowed(a))
      idx[a--] = 0;
    if (a < 0)
      break;
  }
  if (info.options.empty())
    return badInput("'{0}' has no valid variant on this mesh",
                    op->getName().getStringRef().str());
  return llvm::Error::success();
}

void SpaceBuilder::finish(bool bounds) {
  liveSets();
  computeBound();
  capacities();
  usefulDists();
  memoryFloors();
  if (bounds) {
    s.bound_->build();
    return;
  }
  unsigned n = s.ops_.size();
  s.floorSuffix_.assign(n + 1, 0);
  s.opFloor_.assign(n, 0);
}

void SpaceBuilder::liveSets() {
  unsigned n = s.ops_.size();
  s.liveAt_.assign(n + 1, {});
  for (auto [id, v] : llvm::enumerate(s.values_)) {
    if (v.uses.empty())
      continue;
    for (unsigned p = v.availableAt; p <= v.uses.back() && p <= n; ++p)
      s.liveAt_[p].push_back(id);
  }
  for (auto &live : s.liveAt_)
    llvm::stable_sort(live, [&](unsigned a, unsigned b) {
      return std::make_pair(s.values_[a].availableAt, a) <
             std::make_pair(s.values_[b].availableAt, b);
    });
}

void SpaceBuilder::computeBound() {
  unsigned n = s.ops_.size();
  unsigned reps = s.numReps();
  std::vector<double> suffix(reps, 0);
  s.suffixH_.assign(n + 1, 0);
  for (int p = int(n) - 1; p >= 0; --p) {
    for (unsigned r = 0; r < reps; ++r)
      suffix[r] += s.ops_[p].minCompute[r];
    s.suffixH_[p] = *std::max_element(suffix.begin(), suffix.end());
  }
}

void SpaceBuilder::capacities() {
  for (unsigned rep : s.repDevices_)
    s.capacity_.push_back(impl.layout->typeOf(rep).memoryBytes() *
                          (1 - impl.eval.reservedMemoryFraction));
}

void SpaceBuilder::usefulDists() {
  s.usefulFrom_.assign(s.values_.size(), {});
  for (auto [id, v] : llvm::enumerate(s.values_)) {
    auto &out = s.usefulFrom_[id];
    out.assign(v.uses.size() + 1, {});
    for (int k = int(v.uses.size()) - 1; k >= 0; --k) {
      std::set<DistId> set(out[k + 1].begin(), out[k + 1].end());
      const OpInfo &op = s.ops_[v.uses[k]];
      for (const OpOption &o : op.options)
        for (auto [i, w] : llvm::enumerate(op.operands))
          if (w == id && o.operands[i] != kNoDist)
            set.insert(o.operands[i]);
      out[k].assign(set.begin(), set.end());
    }
  }
}

void SpaceBuilder::memoryFloors() {
  unsigned n = s.ops_.size();
  unsigned reps = s.numReps();
  s.memoryFloor_.assign(n + 1, RepVector(reps, 0));
  for (int p = int(n) - 1; p >= 0; --p) {
    const OpInfo &op = s.ops_[p];
    RepVector least(reps, std::numeric_limits<double>::infinity());
    // A recomputed op keeps nothing of its own (its checkpoints are
    // other values' bytes, which the floor may leave out).
    bool recomputable = s.recompute_ && op.grad;
    for (const OpOption &option : op.options) {
      RepVector need(option.kept.begin(), option.kept.end());
      if (recomputable)
        need.assign(reps, 0);
      bool possible = true;
      for (auto [i, v] : llvm::enumerate(op.operands)) {
        const ValueInfo &info = s.values_[v];
        if (info.defPos >= 0 || info.uses.front() != unsigned(p) ||
            option.operands[i] == kNoDist ||
            llvm::is_contained(
                llvm::ArrayRef<unsigned>(op.operands).take_front(i), v))
          continue;
        auto opts = s.storageOptions(v, option.operands[i]);
        if (opts.empty()) {
          possible = false;
          break;
        }
        for (unsigned r = 0; r < reps; ++r) {
          double m = std::numeric_limits<double>::infinity();
          for (const StorageOption &so : opts)
            m = std::min(m, so.committed[r]);
          need[r] += m;
        }
      }
      if (!possible)
        continue;
      for (unsigned r = 0; r < reps; ++r)
        least[r] = std::min(least[r], need[r]);
    }
    for (unsigned r = 0; r < reps; ++r)
      s.memoryFloor_[p][r] =
          s.memoryFloor_[p + 1][r] + (std::isfinite(least[r]) ? least[r] : 0);
  }
}

llvm::Expected<std::unique_ptr<SearchSpace>>
SearchSpace::build(mlir::ModuleOp graph, const ClusterSpec &spec,
                   const EvalOptions &eval, llvm::ArrayRef<double> ratios,
                   bool recompute, bool bounds) {
  std::unique_ptr<SearchSpace> space(new SearchSpace());
  space->recompute_ = recompute;
  space->microBatches_ = spmd::SpmdDialect::getMicroBatches(graph);
  mlir::MLIRContext *ctx = graph.getContext();
  ctx->getOrLoadDialect<spmd::SpmdDialect>();
  SpaceBuilder b{*space, *space->impl_, ctx,
                 llvm::DenseMap<mlir::Value, unsigned>(),
                 std::map<int64_t, int64_t>()};
  space->impl_->spec = &spec;
  space->impl_->eval = optionsFor(graph, eval);
  mlir::func::FuncOp func;
  for (auto f : graph.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!func || f.getName() == "main"))
      func = f;
  if (!func)
    return badInput("the graph module has no function");
  if (auto err = b.collect(func))
    return std::move(err);
  if (auto err = b.makeMesh(spec, ratios))
    return std::move(err);
  // Segments: one per split extent, all at the fixed ratios. Options are
  // made first (they create the segments), priced after the layout exists;
  // so collect the extents first.
  for (const ValueInfo &v : space->values_)
    for (int64_t e : v.shape)
      if (e >= 2)
        b.segmentFor(e);
  for (auto [extent, id] : b.segmentOfExtent)
    space->segments_.push_back(spmd::SegmentAttr::get(
        ctx, id, extent, mlir::DenseF64ArrayAttr::get(ctx, space->ratios_),
        nullptr, 1));
  llvm::sort(space->segments_, [](spmd::SegmentAttr a, spmd::SegmentAttr b) {
    return a.getId() < b.getId();
  });
  mlir::OpBuilder builder(ctx);
  space->impl_->holder = mlir::ModuleOp::create(builder.getUnknownLoc());
  mlir::ModuleOp holder = *space->impl_->holder;
  holder->setAttr(spmd::SpmdDialect::kMeshAttr, space->mesh_);
  llvm::SmallVector<mlir::Attribute> segs(space->segments_.begin(),
                                          space->segments_.end());
  holder->setAttr(spmd::SpmdDialect::kSegmentsAttr,
                  mlir::ArrayAttr::get(ctx, segs));
  auto layout = MeshLayout::get(holder, spec);
  if (!layout)
    return layout.takeError();
  space->impl_->layout.emplace(std::move(*layout));
  space->impl_->pricer =
      std::make_unique<CollectivePricer>(spec, eval.profile, eval.collectives);
  for (unsigned p = 0; p < space->ops_.size(); ++p)
    if (auto err = b.makeOptions(p))
      return std::move(err);
  b.finish(bounds);
  return space;
}
