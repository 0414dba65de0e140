//===- SearchSpace.cpp - The distributed instruction set at fixed ratios --===//
//
// Builds the order, values, options and cost tables of a SearchSpace and
// implements its transition function. Costs come from the evaluator's
// functions: op work from the graph CostOpInterface at shard shapes
// (costTermsOf, opTime), collectives from lib/Eval's CollectivePricer on
// lib/Cost, memory from weft/Cost/Memory.h. docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/SearchSpace.h"
#include "weft/Eval/CollectivePricer.h"
#include "Graph/IR/GraphInterfaces.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Eval/StrategyCost.h"
#include "weft/Spmd/RecipeStats.h"
#include "weft/Spmd/Relayout.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/DenseSet.h"
#include <cmath>
#include <deque>
#include <numeric>
#include <set>

using namespace weft;
using namespace weft::synth;
using spmd::AxisDist;
using spmd::DistAttr;

namespace {
/// A relayout of one value type between two distributions, priced.
struct RelayoutCost {
  bool ok = false;
  RepVector comm, transient;
  double maxSeconds = 0, bytes = 0;
  unsigned collectives = 0;
};
} // namespace

struct SearchSpace::Impl {
  const ClusterSpec *spec = nullptr;
  EvalOptions eval;
  mlir::OwningOpRef<mlir::ModuleOp> holder;
  std::optional<MeshLayout> layout;
  std::unique_ptr<CollectivePricer> pricer;
  std::vector<mlir::RankedTensorType> types;
  llvm::DenseMap<mlir::Type, unsigned> typeIds;
  /// Relayouts by (type, from, to, gradient, ZeRO-3) packed into 64 bits
  /// (looked up on every transition: one probe of a flat table); a deque,
  /// so the references handed out stay valid.
  llvm::DenseMap<uint64_t, uint32_t, PackedKeyInfo> relayoutIndex;
  std::deque<RelayoutCost> relayouts;

  double elementBytes(mlir::RankedTensorType type) const {
    if (type.getElementType().isa<mlir::FloatType>())
      return bytesPerElement(eval.dtype);
    return std::max(1u, type.getElementTypeBitWidth() / 8);
  }
  double shardElements(mlir::RankedTensorType type, DistAttr dist,
                       unsigned d) const {
    auto s = layout->shardShape(type, dist, d);
    double n = 1;
    for (int64_t x : s)
      n *= double(x);
    return n;
  }
  double shardBytes(mlir::RankedTensorType type, DistAttr dist,
                    unsigned d) const {
    return elementBytes(type) * shardElements(type, dist, d);
  }
  /// Seconds of `kind` along `axes` for the group of mesh device `rep`;
  /// `bytesOf(meshDevice)` is a member's contribution.
  double priceAlong(spmd::Collective kind, AxisMask axes, unsigned rep,
                    llvm::function_ref<double(unsigned)> bytesOf,
                    CollectiveVariant variant = {}) {
    if (layout->sizeOf(axes) <= 1 || !spmd::communicates(kind))
      return 0;
    llvm::ArrayRef<unsigned> group = layout->groupOf(rep, axes);
    llvm::ArrayRef<unsigned> cluster = layout->clusterGroupOf(rep, axes);
    // Members of one orbit hold the same shards (MeshLayout): each orbit's
    // bytes are computed once.
    llvm::SmallVector<double> bytes;
    llvm::SmallVector<std::pair<unsigned, double>, 8> orbits;
    for (unsigned y : group) {
      unsigned r = layout->representativeOf(y);
      auto it = llvm::find_if(orbits, [&](auto &o) { return o.first == r; });
      if (it == orbits.end()) {
        orbits.push_back({r, bytesOf(r)});
        it = std::prev(orbits.end());
      }
      bytes.push_back(it->second);
    }
    return pricer->seconds(kind, cluster, bytes, variant);
  }
};

SearchSpace::SearchSpace() : impl(std::make_unique<Impl>()) {}
SearchSpace::~SearchSpace() = default;
SearchSpace::SearchSpace(SearchSpace &&) = default;

DistId SearchSpace::intern(DistAttr d) {
  auto [it, inserted] = distIds.try_emplace(d, dists.size());
  if (inserted)
    dists.push_back(d);
  return it->second;
}

HeldId SearchSpace::internHeld(const HeldSet &s) {
  auto [it, inserted] = heldIds.try_emplace(s, heldSets.size());
  if (inserted)
    heldSets.push_back(s);
  return it->second;
}

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

  llvm::Error collect(mlir::func::FuncOp func);
  llvm::Error makeMesh(const ClusterSpec &spec, llvm::ArrayRef<double> ratios);
  llvm::Error makeOptions(unsigned p);
  /// Seconds of the recipe's all-reduces on the group of mesh device `rep`.
  double recipeSeconds(const OpInfo &info, const OpOption &option,
                       llvm::ArrayRef<spmd::RecipeStat> stats, unsigned rep,
                       bool grad);
  void finish();
  void treeBound(const std::vector<std::vector<double>> &nodeCost);
  /// Per option of op p: the least step() cost over its storage choices
  /// from the most favourable state, every operand held as the option needs
  /// it (so only compute, the recipe's all-reduces, the storage's sync and
  /// gathers and the optimizer update remain); infinity when impossible.
  /// Fills s.tree.spread[p] too.
  std::vector<double> exactNodeCosts(unsigned p);
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
            impl.layout->shardShape(impl.types[s.values[v].typeId],
                                    s.dist(option.operands[stat.operand]), d);
      }
      return spmd::statElements(stat, shard) *
             impl.elementBytes(impl.types[s.values[info.operands[0]].typeId]);
    };
    double t = impl.priceAlong(spmd::Collective::AllReduce, 1u << stat.axis,
                               rep, bytesOf);
    seconds += grad && stat.hasDual ? 2 * t : t;
  }
  return seconds;
}

llvm::Error SpaceBuilder::collect(mlir::func::FuncOp func) {
  auto addValue = [&](mlir::Value v, ValueInfo::Kind kind, int defPos,
                      std::string name) -> llvm::Error {
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
    valueIds[v] = s.values.size();
    s.values.push_back(std::move(info));
    return llvm::Error::success();
  };
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
  for (mlir::Operation &op : func.getBody().front()) {
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    if (auto p = llvm::dyn_cast<graph::ParameterOp>(op)) {
      if (auto err = addValue(p.getResult(), ValueInfo::Kind::Parameter, -1,
                              p.getName().str()))
        return err;
      s.values.back().grad = true;
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
  for (auto [p, op] : llvm::enumerate(order)) {
    OpInfo info;
    info.op = op;
    bool grad = false;
    for (mlir::Value v : op->getOperands()) {
      unsigned id = valueIds.lookup(v);
      info.operands.push_back(id);
      grad |= s.values[id].grad;
      auto &uses = s.values[id].uses;
      if (uses.empty() || uses.back() != p)
        uses.push_back(p);
    }
    for (mlir::Value r : op->getResults()) {
      if (auto err = addValue(r, ValueInfo::Kind::Op, int(p), ""))
        return err;
      s.values.back().grad = grad && s.values.back().isFloat;
      info.results.push_back(s.values.size() - 1);
    }
    s.ops.push_back(std::move(info));
  }
  for (ValueInfo &v : s.values)
    v.availableAt = v.defPos >= 0    ? unsigned(v.defPos + 1)
                    : v.uses.empty() ? ~0u
                                     : v.uses.front() + 1;
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
  s.mesh = spmd::MeshAttr::get(ctx, mlir::DenseI64ArrayAttr::get(ctx, {k}),
                               mlir::ArrayAttr::get(ctx, classes));
  s.axisSizes = {int64_t(classOfMeshNode.size()), k};
  if (ratios.empty()) {
    double total = 0;
    for (auto [i, c] : llvm::enumerate(spec.classes)) {
      double w = spec.deviceTypes[c.typeIndex].peakFlops(dtype);
      s.ratios.push_back(w);
      total += w * devicesOfClass[i];
    }
    for (double &r : s.ratios)
      r /= total;
  } else {
    if (ratios.size() != spec.classes.size())
      return badInput("{0} ratios given for {1} device classes", ratios.size(),
                      spec.classes.size());
    s.ratios.assign(ratios.begin(), ratios.end());
  }
  // Representatives: the first device of the first mesh node of each class
  // (a class is one device type in one node shape with one set of links).
  for (auto [cls, nodes] : llvm::enumerate(nodesOfClass)) {
    if (nodes.empty())
      continue;
    s.repDevices.push_back(unsigned(nodes.front() * k));
    s.repWeight.push_back(unsigned(nodes.size() * k));
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

llvm::Error SpaceBuilder::makeOptions(unsigned p) {
  OpInfo &info = s.ops[p];
  mlir::Operation *op = info.op;
  // An op's options are a function of its name, attributes, operand and
  // result types and whether a gradient flows through it (the sharding
  // rules read nothing else; segments follow extents): the ops of repeated
  // layers take the first alike op's.
  bool anyGrad =
      llvm::any_of(info.operands, [&](unsigned v) { return s.values[v].grad; });
  std::vector<const void *> kind{
      op->getName().getAsOpaquePointer(),
      op->getAttrDictionary().getAsOpaquePointer(),
      reinterpret_cast<const void *>(uintptr_t(anyGrad))};
  for (mlir::Type t : op->getOperandTypes())
    kind.push_back(t.getAsOpaquePointer());
  for (mlir::Type t : op->getResultTypes())
    kind.push_back(t.getAsOpaquePointer());
  auto [alike, fresh] = alikeOps.try_emplace(std::move(kind), p);
  if (!fresh) {
    const OpInfo &first = s.ops[alike->second];
    info.variantNames = first.variantNames;
    info.options = first.options;
    info.minCompute = first.minCompute;
    info.grad = first.grad;
    return llvm::Error::success();
  }
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
  bool grad =
      llvm::any_of(info.operands, [&](unsigned v) { return s.values[v].grad; });
  info.grad = grad;
  auto cop = llvm::cast<graph::CostOpInterface>(op);
  std::set<
      std::pair<llvm::SmallVector<DistId, 4>, llvm::SmallVector<DistId, 2>>>
      seen;
  llvm::SmallVector<uint16_t, 4> idx(numAxes, 0);
  auto allowed = [&](unsigned axis) -> unsigned {
    return s.axisSizes[axis] > 1 ? variants.size() : 1;
  };
  auto pick = [&](unsigned axis, unsigned i) -> unsigned {
    return s.axisSizes[axis] > 1 ? i : replicate;
  };
  info.minCompute.assign(s.numReps(), std::numeric_limits<double>::infinity());
  while (true) {
    OpOption option;
    bool valid = true;
    for (unsigned a = 0; a < numAxes; ++a)
      option.perAxis.push_back(pick(a, idx[a]));
    auto segFor = [&](int64_t e) { return segmentFor(e); };
    for (unsigned i = 0; i < op->getNumOperands() && valid; ++i) {
      llvm::SmallVector<graph::AxisLayout, 4> perAxis;
      for (unsigned a = 0; a < numAxes; ++a) {
        const auto &v = variants[option.perAxis[a]];
        perAxis.push_back(i < v.operands.size() ? v.operands[i]
                                                : graph::AxisLayout());
      }
      auto d = distFrom(ctx, perAxis, s.values[info.operands[i]].shape,
                        s.axisSizes, segFor);
      if (!d)
        valid = false;
      else
        option.operands.push_back(s.intern(*d));
    }
    for (unsigned i = 0; i < op->getNumResults() && valid; ++i) {
      llvm::SmallVector<graph::AxisLayout, 4> perAxis;
      for (unsigned a = 0; a < numAxes; ++a) {
        const auto &v = variants[option.perAxis[a]];
        perAxis.push_back(i < v.results.size() ? v.results[i]
                                               : graph::AxisLayout());
      }
      auto d = distFrom(ctx, perAxis, s.values[info.results[i]].shape,
                        s.axisSizes, segFor);
      if (!d)
        valid = false;
      else
        option.results.push_back(s.intern(*d));
    }
    if (valid && seen.insert({option.operands, option.results}).second) {
      llvm::SmallVector<const graph::ShardingVariant *, 4> chosen;
      for (unsigned a = 0; a < numAxes; ++a)
        chosen.push_back(&variants[option.perAxis[a]]);
      llvm::SmallVector<spmd::RecipeStat, 2> stats =
          spmd::recipeStats(op, chosen, s.axisSizes);
      for (auto [r, rep] : llvm::enumerate(s.repDevices)) {
        const DeviceType &type = impl.layout->typeOf(rep);
        graph::ShardShapes shapes;
        for (auto [i, v] : llvm::enumerate(info.operands)) {
          graph::TensorShape t =
              graph::TensorShape::of(s.values[v].value.getType());
          t.dims = impl.layout->shardShape(impl.types[s.values[v].typeId],
                                           s.dist(option.operands[i]), rep);
          shapes.operands.push_back(t);
        }
        double produced = 0;
        for (auto [i, v] : llvm::enumerate(info.results)) {
          auto type = impl.types[s.values[v].typeId];
          graph::TensorShape t = graph::TensorShape::of(type);
          t.dims =
              impl.layout->shardShape(type, s.dist(option.results[i]), rep);
          produced += double(t.numElements()) * impl.elementBytes(type);
          shapes.results.push_back(t);
        }
        OpCostTerms terms = costTermsOf(cop, shapes, impl.eval.dtype);
        double seconds = 0, kept = 0, forward = 0;
        if (terms.forward.flops != 0 || terms.forward.bytes != 0) {
          seconds =
              opTime(type, impl.eval.dtype, terms.forward, impl.eval.profile)
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
        option.recipeComm.push_back(
            recipeSeconds(info, option, stats, rep, grad));
        option.recipeForward.push_back(
            stats.empty() ? 0 : recipeSeconds(info, option, stats, rep, false));
        option.kept.push_back(kept);
        option.produced.push_back(produced);
        info.minCompute[r] = std::min(info.minCompute[r], seconds);
      }
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

void SpaceBuilder::finish() {
  unsigned n = s.ops.size();
  s.liveAt.assign(n + 1, {});
  for (auto [id, v] : llvm::enumerate(s.values)) {
    if (v.uses.empty())
      continue;
    for (unsigned p = v.availableAt; p <= v.uses.back() && p <= n; ++p)
      s.liveAt[p].push_back(id);
  }
  for (auto &live : s.liveAt)
    llvm::stable_sort(live, [&](unsigned a, unsigned b) {
      return std::make_pair(s.values[a].availableAt, a) <
             std::make_pair(s.values[b].availableAt, b);
    });
  unsigned reps = s.numReps();
  std::vector<double> suffix(reps, 0);
  s.suffixH.assign(n + 1, 0);
  for (int p = int(n) - 1; p >= 0; --p) {
    for (unsigned r = 0; r < reps; ++r)
      suffix[r] += s.ops[p].minCompute[r];
    s.suffixH[p] = *std::max_element(suffix.begin(), suffix.end());
  }
  for (unsigned rep : s.repDevices)
    s.capacity_.push_back(impl.layout->typeOf(rep).memoryBytes() *
                          (1 - impl.eval.reservedMemoryFraction));
  // Useful distributions per value and remaining uses.
  s.usefulFrom.assign(s.values.size(), {});
  for (auto [id, v] : llvm::enumerate(s.values)) {
    auto &out = s.usefulFrom[id];
    out.assign(v.uses.size() + 1, {});
    for (int k = int(v.uses.size()) - 1; k >= 0; --k) {
      std::set<DistId> set(out[k + 1].begin(), out[k + 1].end());
      const OpInfo &op = s.ops[v.uses[k]];
      for (const OpOption &o : op.options)
        for (auto [i, w] : llvm::enumerate(op.operands))
          if (w == id && o.operands[i] != kNoDist)
            set.insert(o.operands[i]);
      out[k].assign(set.begin(), set.end());
    }
  }
  // Memory floor: per op the least (kept + first-use storage) over its
  // options, summed from the end.
  s.memoryFloor_.assign(n + 1, RepVector(reps, 0));
  for (int p = int(n) - 1; p >= 0; --p) {
    const OpInfo &op = s.ops[p];
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
        const ValueInfo &info = s.values[v];
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
  // The cost floor of each op: the least over its choices of the step's
  // own cost from the most favourable state (exactNodeCosts); each step
  // costs at least its op's floor, so the suffix sum is an admissible,
  // consistent h (and never below the max over devices of the summed
  // cheapest compute). A space no plan of which fits memory (its floor
  // exceeds a capacity) is never searched with memory pruning: it skips
  // these floors and the tree bound, and its h is the compute bound.
  std::vector<double> &costFloor = s.floorSuffix_;
  costFloor.assign(n + 1, 0);
  s.opFloor_.assign(n, 0);
  for (unsigned r = 0; r < reps; ++r)
    if (s.memoryFloor_[0][r] > s.capacity_[r])
      return;
  std::vector<std::vector<double>> nodeCost(n);
  s.tree.spread.assign(n, {});
  for (int p = int(n) - 1; p >= 0; --p) {
    nodeCost[p] = exactNodeCosts(unsigned(p));
    double leastCost = std::numeric_limits<double>::infinity();
    for (double c : nodeCost[p])
      leastCost = std::min(leastCost, c);
    s.opFloor_[p] = std::isfinite(leastCost) ? leastCost : 0;
    costFloor[p] = costFloor[p + 1] + s.opFloor_[p];
  }
  for (unsigned p = 0; p <= n; ++p)
    s.suffixH[p] = std::max(s.suffixH[p], costFloor[p]);
  treeBound(nodeCost);
}

std::vector<double> SpaceBuilder::exactNodeCosts(unsigned p) {
  const OpInfo &op = s.ops[p];
  llvm::ArrayRef<unsigned> live = s.liveAt[p];
  HeldId any = s.internHeld({0, {0}});
  std::vector<double> best(op.options.size(),
                           std::numeric_limits<double>::infinity());
  std::vector<double> &spread = s.tree.spread[p];
  spread.assign(op.options.size(), 0);
  StateKey key;
  int keyOption = -1;
  s.forEachChoice(p, [&](const StepChoice &c) {
    if (keyOption != int(c.option)) {
      // Each operand held as the option needs it (a leaf used here first
      // takes its storage in step(), whatever the key holds).
      keyOption = c.option;
      key.assign(live.size(), any);
      const OpOption &option = op.options[c.option];
      for (auto [k, v] : llvm::enumerate(live)) {
        SearchSpace::HeldSet set;
        for (auto [i, w] : llvm::enumerate(op.operands))
          if (w == v && option.operands[i] != kNoDist &&
              !llvm::is_contained(set.dists, option.operands[i]))
            set.dists.push_back(option.operands[i]);
        if (!set.dists.empty()) {
          std::sort(set.dists.begin() + 1, set.dists.end());
          key[k] = s.internHeld(set);
        }
      }
    }
    StepDetail detail;
    if (auto r = s.step(p, key, c, &detail)) {
      best[c.option] = std::min(best[c.option], r->cost);
      spread[c.option] =
          std::max(spread[c.option], detail.commSeconds - detail.commLeast);
    }
  });
  return best;
}

/// The tree bound (docs/Synthesis.md): each op hangs below the producer of
/// one op-result operand (one whose value has no consumer below it yet,
/// else the largest), so the ops form a forest whose subtrees are disjoint. A
/// plan pays, per op, at least its node cost (compute, least gradient sync,
/// least optimizer) and, per value, at least its dearest relayout from its own
/// distribution: every relayout of a value starts there and each target is made
/// once, and each relayout is charged at most what its step pays for it
/// (relayBound). The consumers below one value are chosen together (groupBound,
/// lib/Synth/StarBound.h) and pay its dearest relayout once, the value's other
/// uses bounding it from below. A backward DP gives the least cost of each
/// subtree per option; h(p) sums, over the ops >= p whose parent is done (or
/// that have none), their subtree's least: admissible.
void SpaceBuilder::treeBound(const std::vector<std::vector<double>> &nodeCost) {
  unsigned n = s.ops.size();
  SearchSpace::Tree &ch = s.tree;
  std::vector<int> parent(n, -1);
  ch.kids.assign(s.values.size(), {});
  ch.share.assign(n, 1);
  for (unsigned q = 0; q < n; ++q) {
    const OpInfo &op = s.ops[q];
    // A value without consumers below it first (the residual stream then
    // runs through each block's branch, not past it), the largest first.
    int bestSlot = -1;
    unsigned results = 0;
    std::pair<bool, double> bestRank{false, -1};
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const ValueInfo &info = s.values[v];
      if (info.defPos < 0)
        continue;
      ++results;
      double size = 1;
      for (int64_t d : info.shape)
        size *= double(d);
      std::pair<bool, double> rank{ch.kids[v].empty(), size};
      if (rank > bestRank) {
        bestRank = rank;
        bestSlot = int(i);
      }
    }
    ch.share[q] = 1.0 / std::max(1u, results);
    if (bestSlot < 0)
      continue;
    unsigned v = op.operands[bestSlot];
    parent[q] = s.values[v].defPos;
    ch.kids[v].push_back(q);
  }
  // best[q][o]: least cost of q's subtree with q at option o; the subtrees
  // below q's results are done (their ops come later).
  ch.best.assign(n, {});
  ch.suffix.assign(n, 0);
  for (int q = int(n) - 1; q >= 0; --q) {
    const OpInfo &op = s.ops[q];
    ch.best[q] = nodeCost[q];
    for (auto [r, v] : llvm::enumerate(op.results)) {
      if (s.values[v].uses.empty())
        continue;
      std::map<DistId, double> byResult;
      for (auto [o, option] : llvm::enumerate(op.options)) {
        DistId u = option.results[r];
        auto [it, inserted] = byResult.try_emplace(u, 0);
        if (inserted)
          it->second = s.groupBound(v, 0, s.internHeld({0, {u}}));
        ch.best[q][o] += it->second;
      }
    }
    double m = std::numeric_limits<double>::infinity();
    for (double b : ch.best[q])
      m = std::min(m, b);
    ch.suffix[q] = std::isfinite(m) ? m : 0;
  }
  // h(p) = Σ over ops q >= p whose parent is < p (or none) of suffix[q].
  std::vector<double> diff(n + 2, 0);
  for (unsigned q = 0; q < n; ++q) {
    unsigned from = parent[q] >= 0 ? unsigned(parent[q]) + 1 : 0;
    diff[from] += ch.suffix[q];
    diff[q + 1] -= ch.suffix[q];
  }
  double h = 0;
  ch.otherH = s.suffixH;
  ch.treeH.assign(n + 1, 0);
  for (unsigned p = 0; p <= n; ++p) {
    h += diff[p];
    ch.treeH[p] = std::max(0.0, h);
    s.suffixH[p] = std::max(s.suffixH[p], ch.treeH[p]);
  }
}

llvm::Expected<std::unique_ptr<SearchSpace>>
SearchSpace::build(mlir::ModuleOp graph, const ClusterSpec &spec,
                   const EvalOptions &eval, llvm::ArrayRef<double> ratios,
                   int64_t align, bool recompute) {
  (void)align;
  std::unique_ptr<SearchSpace> space(new SearchSpace());
  space->recompute_ = recompute;
  space->microBatches_ = spmd::SpmdDialect::getMicroBatches(graph);
  mlir::MLIRContext *ctx = graph.getContext();
  ctx->getOrLoadDialect<spmd::SpmdDialect>();
  SpaceBuilder b{*space, *space->impl, ctx,
                 llvm::DenseMap<mlir::Value, unsigned>(),
                 std::map<int64_t, int64_t>()};
  space->impl->spec = &spec;
  space->impl->eval = eval;
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
  for (const ValueInfo &v : space->values)
    for (int64_t e : v.shape)
      if (e >= 2)
        b.segmentFor(e);
  for (auto [extent, id] : b.segmentOfExtent)
    space->segments.push_back(spmd::SegmentAttr::get(
        ctx, id, extent, mlir::DenseF64ArrayAttr::get(ctx, space->ratios),
        nullptr, 1));
  llvm::sort(space->segments, [](spmd::SegmentAttr a, spmd::SegmentAttr b) {
    return a.getId() < b.getId();
  });
  mlir::OpBuilder builder(ctx);
  space->impl->holder = mlir::ModuleOp::create(builder.getUnknownLoc());
  mlir::ModuleOp holder = *space->impl->holder;
  holder->setAttr(spmd::SpmdDialect::kMeshAttr, space->mesh);
  llvm::SmallVector<mlir::Attribute> segs(space->segments.begin(),
                                          space->segments.end());
  holder->setAttr(spmd::SpmdDialect::kSegmentsAttr,
                  mlir::ArrayAttr::get(ctx, segs));
  auto layout = MeshLayout::get(holder, spec);
  if (!layout)
    return layout.takeError();
  space->impl->layout.emplace(std::move(*layout));
  space->impl->pricer =
      std::make_unique<CollectivePricer>(spec, eval.profile, eval.collectives);
  for (unsigned p = 0; p < space->ops.size(); ++p)
    if (auto err = b.makeOptions(p))
      return std::move(err);
  b.finish();
  return space;
}

//===----------------------------------------------------------------------===//
// Transitions
//===----------------------------------------------------------------------===//

llvm::ArrayRef<StorageOption> SearchSpace::storageOptions(unsigned value,
                                                          DistId use) {
  const ValueInfo &v = values[value];
  auto [it, inserted] =
      storage.try_emplace({(uint64_t(v.typeId) << 8) | uint64_t(v.kind), use});
  std::vector<StorageOption> &out = it->second;
  if (!inserted)
    return out;
  DistAttr useDist = dist(use);
  if (useDist.isPartial())
    return out; // A leaf is never a partial value.
  unsigned reps = numReps();
  if (v.kind != ValueInfo::Kind::Parameter) {
    StorageOption o;
    o.strategy = v.kind == ValueInfo::Kind::Buffer
                     ? spmd::ParamStrategy::Buffer
                     : spmd::ParamStrategy::Replicated;
    o.stored = use;
    o.sync.assign(reps, 0);
    o.committed.assign(reps, 0);
    if (v.kind == ValueInfo::Kind::Buffer) {
      auto type = impl->types[v.typeId];
      for (unsigned r = 0; r < reps; ++r) {
        MemoryCounts c;
        c.storedParameters = impl->shardElements(type, useDist, repDevices[r]);
        o.committed[r] =
            deviceMemory(c, impl->eval.dtype, impl->eval.optimizer).total();
      }
    }
    out.push_back(std::move(o));
    return out;
  }
  AxisMask idAxes = 0;
  for (auto [a, e] : llvm::enumerate(useDist.getAxes()))
    if (e.isIdentity() && axisSizes[a] > 1)
      idAxes |= 1u << a;
  llvm::SmallVector<std::pair<spmd::ParamStrategy, DistAttr>, 4> candidates;
  candidates.push_back({spmd::ParamStrategy::Replicated, useDist});
  if (idAxes) {
    candidates.push_back({spmd::ParamStrategy::Zero1, useDist});
    candidates.push_back({spmd::ParamStrategy::Zero2, useDist});
    // ZeRO-3: the largest dim not split by the use, split over every id
    // axis, gathered before use.
    int64_t ways = impl->layout->sizeOf(idAxes);
    int best = -1;
    for (unsigned d = 0; d < v.shape.size(); ++d) {
      bool split = llvm::any_of(useDist.getAxes(), [&](const AxisDist &e) {
        return e.isGather() && e.dim == int64_t(d);
      });
      if (!split && v.shape[d] >= 2 && v.shape[d] >= ways &&
          (best < 0 || v.shape[d] > v.shape[best]))
        best = int(d);
    }
    if (best >= 0) {
      DistAttr stored = useDist;
      int64_t seg = 0;
      for (const spmd::SegmentAttr &sa : segments)
        if (sa.getExtent() == v.shape[best])
          seg = sa.getId();
      for (unsigned a = 0; a < numAxes(); ++a)
        if (idAxes & (1u << a))
          stored = stored.with(a, AxisDist::gather(best, seg));
      if (spmd::isStructurallyValid(stored))
        candidates.push_back({spmd::ParamStrategy::Zero3, stored});
    }
  }
  auto type = impl->types[v.typeId];
  const EvalOptions &eval = impl->eval;
  for (auto &candidate : candidates) {
    spmd::ParamStrategy strategy = candidate.first;
    const spmd::DistAttr &stored = candidate.second;
    StorageOption o;
    o.strategy = strategy;
    o.stored = intern(stored);
    AxisMask storedId = 0;
    for (auto [a, e] : llvm::enumerate(stored.getAxes()))
      if (e.isIdentity())
        storedId |= 1u << a;
    StrategyCost cost = strategyCost(
        strategy, double(impl->layout->sizeOf(storedId)), eval.dtype);
    double update = 0, gather = 0;
    for (unsigned r = 0; r < reps; ++r) {
      unsigned rep = repDevices[r];
      auto elementsOf = [&](unsigned d) {
        return impl->shardElements(type, stored, d);
      };
      MemoryCounts c = cost.counts(elementsOf(rep));
      o.committed.push_back(
          deviceMemory(c, eval.dtype, eval.optimizer).total());
      CollectiveVariant best;
      best.bestAllReduce = true;
      double sync = impl->priceAlong(
          cost.dual->gradientSync, storedId, rep,
          [&](unsigned d) { return cost.syncBytes(elementsOf(d)); }, best);
      // Gradient accumulation: costs are per micro-batch, so what runs once
      // per step (a sync of whole gradients, the optimizer) counts 1/m.
      o.sync.push_back(cost.syncOncePerStep() ? sync / microBatches_ : sync);
      gather = std::max(
          gather,
          impl->priceAlong(
              cost.dual->afterUpdate, storedId, rep,
              [&](unsigned d) { return cost.afterUpdateBytes(elementsOf(d)); },
              best));
      OpWork work = optimizerUpdateWork(c.optimizerParameters, eval.optimizer,
                                        eval.dtype);
      update = std::max(update, opTime(impl->layout->typeOf(rep), eval.dtype,
                                       work, eval.profile)
                                    .seconds);
    }
    o.optimizerSeconds = (update + gather) / double(microBatches_);
    out.push_back(std::move(o));
  }
  return out;
}

/// The relayout of a value of type `typeId` from `from` to `to`.
static const RelayoutCost &relayoutCost(SearchSpace &s, SearchSpace::Impl &impl,
                                        unsigned typeId, DistId from, DistId to,
                                        bool grad, bool zero3) {
  // 20 + 21 + 21 + 2 bits; ids beyond them are not expected (a space has
  // far fewer types and distributions), and the all-ones keys are reserved.
  assert(typeId < (1u << 20) - 1 && from < (1u << 21) && to < (1u << 21) &&
         "relayout key fields out of range");
  uint64_t key = uint64_t(typeId) << 44 | uint64_t(from) << 23 |
                 uint64_t(to) << 2 | uint64_t(grad) << 1 | uint64_t(zero3);
  auto [it, inserted] = impl.relayoutIndex.try_emplace(key, 0);
  if (!inserted)
    return impl.relayouts[it->second];
  it->second = impl.relayouts.size();
  RelayoutCost &c = impl.relayouts.emplace_back();
  auto steps = spmd::planRelayout(s.dist(from), s.dist(to));
  if (mlir::failed(steps))
    return c;
  c.ok = true;
  unsigned reps = s.numReps();
  c.comm.assign(reps, 0);
  c.transient.assign(reps, 0);
  auto type = impl.types[typeId];
  for (const spmd::RelayoutStep &st : *steps) {
    AxisMask mask = 1u << st.axis;
    auto inBytes = [&](unsigned d) {
      return impl.shardBytes(type, st.before, d);
    };
    auto outBytes = [&](unsigned d) {
      return impl.shardBytes(type, st.after, d);
    };
    spmd::Collective fwd = spmd::Collective::None, bwd = spmd::Collective::None;
    bool byResult = false, reverses = false;
    switch (st.kind) {
    case spmd::RelayoutKind::Shard:
      break;
    case spmd::RelayoutKind::AllGather:
      fwd = spmd::Collective::AllGather;
      bwd = spmd::Collective::ReduceScatter;
      break;
    case spmd::RelayoutKind::ReduceScatter:
      fwd = spmd::Collective::ReduceScatter;
      bwd = spmd::Collective::AllGather;
      byResult = true;
      break;
    case spmd::RelayoutKind::AllReduce:
      fwd = spmd::Collective::AllReduce;
      bwd = st.before.getAxes()[st.axis].kind == AxisDist::Kind::Max
                ? spmd::Collective::None
                : spmd::Collective::AllReduce;
      break;
    case spmd::RelayoutKind::AllToAll:
      fwd = bwd = spmd::Collective::AllToAll;
      reverses = true;
      break;
    }
    if (fwd != spmd::Collective::None)
      ++c.collectives;
    auto fwdBytes = [&](unsigned d) {
      return byResult ? outBytes(d) : inBytes(d);
    };
    for (unsigned r = 0; r < reps; ++r) {
      unsigned rep = s.repDevices[r];
      double t = impl.priceAlong(fwd, mask, rep, fwdBytes);
      if (grad && spmd::communicates(bwd)) {
        t += impl.priceAlong(bwd, mask, rep, [&](unsigned d) {
          return reverses ? outBytes(d) : fwdBytes(d);
        });
        if (zero3 && fwd == spmd::Collective::AllGather &&
            !impl.eval.keepGatheredParameters)
          t +=
              impl.priceAlong(spmd::Collective::AllGather, mask, rep, fwdBytes);
      }
      c.comm[r] += t;
      if (fwd != spmd::Collective::None)
        c.bytes = std::max(c.bytes, fwdBytes(rep));
      c.transient[r] = std::max(c.transient[r], outBytes(rep));
    }
  }
  c.maxSeconds =
      c.comm.empty() ? 0 : *std::max_element(c.comm.begin(), c.comm.end());
  return c;
}

/// Positions 1..n-1 whose count is at most `slack` above the least, with 0
/// and n.
static std::vector<unsigned> leastPositions(llvm::ArrayRef<size_t> count,
                                            unsigned slack) {
  unsigned n = count.size();
  size_t least = ~size_t(0);
  for (unsigned p = 1; p < n; ++p)
    least = std::min(least, count[p]);
  std::vector<unsigned> out{0};
  for (unsigned p = 1; p < n; ++p)
    if (count[p] <= least + slack)
      out.push_back(p);
  out.push_back(n);
  return out;
}

std::vector<unsigned> SearchSpace::cuts(unsigned slack) const {
  std::vector<size_t> count;
  for (unsigned p = 0; p < numPositions(); ++p)
    count.push_back(live(p).size());
  return leastPositions(count, slack);
}

std::vector<unsigned> SearchSpace::checkpointCuts() const {
  unsigned n = numPositions();
  std::vector<unsigned> span(values.size(), 0);
  for (unsigned p = 0; p < n; ++p)
    for (unsigned v : live(p))
      ++span[v];
  std::vector<size_t> count;
  for (unsigned p = 0; p < n; ++p)
    count.push_back(
        llvm::count_if(live(p), [&](unsigned v) { return 2 * span[v] <= n; }));
  return leastPositions(count, /*slack=*/0);
}

const RepVector &SearchSpace::shardBytes(unsigned value, DistId d) {
  auto [it, inserted] = shardBytes_.try_emplace(
      (uint64_t(values[value].typeId) << 32) | uint64_t(d));
  if (inserted)
    for (unsigned rep : repDevices)
      it->second.push_back(
          impl->shardBytes(impl->types[values[value].typeId], dist(d), rep));
  return it->second;
}

const RepVector *SearchSpace::relayoutSeconds(unsigned value, DistId from,
                                              DistId to, bool zero3) {
  const ValueInfo &info = values[value];
  const RelayoutCost &c =
      relayoutCost(*this, *impl, info.typeId, from, to, info.grad, zero3);
  return c.ok ? &c.comm : nullptr;
}

llvm::ArrayRef<DistId> SearchSpace::usefulAt(unsigned value, unsigned p) const {
  const ValueInfo &info = values[value];
  unsigned k = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
               info.uses.begin();
  return usefulFrom[value][k];
}

void SearchSpace::forEachChoice(
    unsigned p, llvm::function_ref<void(const StepChoice &)> f) {
  const OpInfo &op = ops[p];
  for (unsigned o = 0; o < op.options.size(); ++o) {
    const OpOption &option = op.options[o];
    StepChoice choice;
    choice.option = o;
    choice.storage.assign(op.operands.size(), 0);
    // Operands that are leaves used for the first time choose a storage.
    llvm::SmallVector<unsigned, 4> firstUse;
    llvm::SmallVector<unsigned, 4> counts;
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const ValueInfo &info = values[v];
      if (info.defPos >= 0 || info.uses.front() != p ||
          option.operands[i] == kNoDist)
        continue;
      // The first operand slot using the leaf decides.
      bool earlier = false;
      for (unsigned j = 0; j < i; ++j)
        earlier |= op.operands[j] == v;
      if (earlier)
        continue;
      size_t n = storageOptions(v, option.operands[i]).size();
      if (n == 0) {
        firstUse.clear();
        counts.assign(1, 0);
        break;
      }
      firstUse.push_back(i);
      counts.push_back(n);
    }
    if (llvm::is_contained(counts, 0u))
      continue;
    // Odometer over the storage options.
    llvm::SmallVector<unsigned, 4> idx(firstUse.size(), 0);
    // Every op with a backward pass (one saving nothing still carries the
    // run on).
    bool recomputable = recompute_ && op.grad;
    while (true) {
      for (auto [k, i] : llvm::enumerate(firstUse))
        choice.storage[i] = idx[k];
      choice.recompute = false;
      f(choice);
      if (recomputable) {
        choice.recompute = true;
        f(choice);
      }
      int k = int(firstUse.size()) - 1;
      while (k >= 0 && ++idx[k] >= counts[k])
        idx[k--] = 0;
      if (k < 0)
        break;
    }
  }
}

std::optional<StepResult> SearchSpace::step(unsigned p, const StateKey &key,
                                            const StepChoice &choice,
                                            StepDetail *detail) {
  const OpInfo &op = ops[p];
  const OpOption &option = op.options[choice.option];
  unsigned reps = numReps();
  StepResult out;
  // Recomputed (docs/Synthesis.md "Recomputation"): the saved tensors join
  // the open run instead of being kept; the forward runs again.
  out.recompute = choice.recompute;
  out.neutral = !op.grad;
  if (choice.recompute) {
    out.committed.assign(reps, 0);
    out.run.assign(option.kept.begin(), option.kept.end());
  } else {
    out.committed.assign(option.kept.begin(), option.kept.end());
    out.run.assign(reps, 0);
  }
  out.transient.assign(option.produced.begin(), option.produced.end());
  RepVector comm(option.recipeComm.begin(), option.recipeComm.end());
  if (choice.recompute)
    for (unsigned r = 0; r < reps; ++r)
      comm[r] += option.recipeForward[r];
  double optimizer = 0;
  // The held sets this step touches, and each one's own distribution.
  struct Entry {
    unsigned value;
    HeldSet set;
    DistId own = 0;
    /// The held set's id in `key` (none for a first use or a result): an
    /// entry left as it was keeps its id without interning.
    std::optional<HeldId> origin = std::nullopt;
  };
  // Checkpoints of a recomputed op: (value, distribution) kept.
  llvm::SmallVector<std::pair<unsigned, DistId>, 4> checkpoints;
  llvm::SmallVector<Entry, 6> touched;
  llvm::ArrayRef<unsigned> liveNow = liveAt[p];
  auto find = [&](unsigned v) -> Entry * {
    for (Entry &e : touched)
      if (e.value == v)
        return &e;
    return nullptr;
  };
  for (auto [i, v] : llvm::enumerate(op.operands)) {
    DistId want = option.operands[i];
    if (want == kNoDist)
      continue;
    Entry *e = find(v);
    const ValueInfo &info = values[v];
    if (!e) {
      touched.push_back({v, {}});
      e = &touched.back();
      if (info.defPos < 0 && info.uses.front() == p) {
        auto opts = storageOptions(v, want);
        if (choice.storage[i] >= opts.size())
          return std::nullopt;
        const StorageOption &so = opts[choice.storage[i]];
        e->set.tag = info.kind == ValueInfo::Kind::Parameter
                         ? uint8_t(1 + unsigned(so.strategy))
                         : 0;
        e->set.dists.push_back(so.stored);
        for (unsigned r = 0; r < reps; ++r) {
          comm[r] += so.sync[r];
          out.committed[r] += so.committed[r];
        }
        optimizer += so.optimizerSeconds;
      } else {
        auto it = llvm::find(liveNow, v);
        if (it == liveNow.end())
          return std::nullopt; // Not live: an order bug.
        e->origin = key[it - liveNow.begin()];
        e->set = heldSets[*e->origin];
      }
      e->own = e->set.dists.front();
    }
    // A recomputed op keeps what it cannot get back by recomputing its
    // run: an operand that is not a leaf, unless produced in the open run
    // and used as produced.
    if (choice.recompute && info.defPos >= 0 &&
        !((e->set.tag & kRunTag) && want == e->own) &&
        !llvm::is_contained(checkpoints, std::make_pair(v, want))) {
      checkpoints.push_back({v, want});
      const RepVector &bytes = shardBytes(v, want);
      for (unsigned r = 0; r < reps; ++r)
        out.committed[r] += bytes[r];
    }
    if (llvm::is_contained(e->set.dists, want))
      continue;
    // Every relayout starts from the value's own (first) distribution, as
    // the program builder emits them.
    bool zero3 = e->set.tag == 1 + unsigned(spmd::ParamStrategy::Zero3);
    DistId from = e->set.dists.front();
    const RelayoutCost &best =
        relayoutCost(*this, *impl, info.typeId, from, want, info.grad, zero3);
    if (!best.ok)
      return std::nullopt;
    for (unsigned r = 0; r < reps; ++r) {
      comm[r] += best.comm[r];
      out.transient[r] = std::max(out.transient[r], best.transient[r]);
    }
    if (detail)
      detail->relayouts.push_back(
          {v, from, want, best.maxSeconds, best.bytes, best.collectives});
    e->set.dists.insert(
        std::lower_bound(e->set.dists.begin() + 1, e->set.dists.end(), want),
        want);
  }
  // Canonical held sets: extra distributions no later use can require are
  // dropped; a value whose every possibly-required distribution is held
  // keeps just those (its own distribution no longer matters).
  for (Entry &e : touched) {
    const ValueInfo &info = values[e.value];
    unsigned k = std::upper_bound(info.uses.begin(), info.uses.end(), p) -
                 info.uses.begin();
    if (k >= info.uses.size())
      continue; // Dead after this step.
    const std::vector<DistId> &useful = usefulFrom[e.value][k];
    llvm::SmallVector<DistId, 2> kept{e.set.dists.front()};
    bool all = true;
    for (DistId w : useful) {
      bool held = llvm::is_contained(e.set.dists, w);
      all &= held;
      if (held && w != kept.front())
        kept.push_back(w);
    }
    if (all && !useful.empty()) {
      kept.assign(useful.begin(), useful.end());
    } else {
      std::sort(kept.begin() + 1, kept.end());
    }
    e.set.dists = std::move(kept);
    // Its own distribution dropped: no later use gets it as produced.
    if (e.set.dists.front() != e.own)
      e.set.tag &= ~kRunTag;
  }
  for (auto [i, v] : llvm::enumerate(op.results))
    touched.push_back(
        {v, {choice.recompute ? kRunTag : uint8_t(0), {option.results[i]}}});
  llvm::ArrayRef<unsigned> liveNext = liveAt[p + 1];
  out.next.reserve(liveNext.size());
  for (unsigned v : liveNext) {
    if (Entry *e = find(v)) {
      out.next.push_back(e->origin && heldSets[*e->origin] == e->set
                             ? *e->origin
                             : internHeld(e->set));
      continue;
    }
    auto it = llvm::find(liveNow, v);
    out.next.push_back(it == liveNow.end() ? 0 : key[it - liveNow.begin()]);
  }
  // A kept op closes the open run: nothing produced before it is
  // recomputed with a later op.
  if (recompute_ && !choice.recompute && op.grad)
    for (HeldId &id : out.next)
      if (heldSets[id].tag & kRunTag) {
        HeldSet plain = heldSets[id];
        plain.tag &= ~kRunTag;
        id = internHeld(plain);
      }
  double compute = 0;
  for (unsigned r = 0; r < reps; ++r)
    compute = std::max(compute, option.compute[r] +
                                    (choice.recompute ? option.forward[r] : 0));
  double commMax = *std::max_element(comm.begin(), comm.end());
  out.cost = compute + commMax + optimizer;
  if (detail) {
    detail->computeSeconds = compute;
    detail->commSeconds = commMax;
    detail->commLeast = *std::min_element(comm.begin(), comm.end());
    detail->optimizerSeconds = optimizer;
  }
  return out;
}
