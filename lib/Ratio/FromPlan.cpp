//===- FromPlan.cpp - The ratio problem of an spmd plan
//--------------------===//
//
// Walks the plan's function exactly as lib/Eval/Evaluator.cpp does (same
// steps, same gradient bookkeeping, same parameter strategies), but every
// per-device quantity is a form in the ratios instead of a number: shard
// extents are linear in the ratios (a device holds the sum of the shares of
// the devices that agree with it on the split axes), op work is probed with
// costTermsOf along that line, collective times come from PlanForms.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/FromPlan.h"
#include "CostKey.h"
#include "Graph/IR/GraphInterfaces.h"
#include "PlanForms.h"
#include "PlanSegments.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Ratio/StepCollapse.h"
#include "weft/Spmd/RecipeStats.h"
#include "weft/Spmd/RecomputeRun.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/DenseSet.h"
#include <cmath>

using namespace weft;
using namespace weft::ratio;
using namespace weft::spmd;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

namespace {

using ShapeForm = llvm::SmallVector<LinearCost, 4>;

/// Work of one op at some shard shapes.
struct Work {
  OpClass forwardClass = OpClass::Elementwise,
          backwardClass = OpClass::Elementwise;
  double v[5] = {0, 0, 0, 0,
                 0}; // fwd flops, fwd bytes, bwd flops, bwd bytes, kept
};

/// Work of one op as forms.
struct WorkForms {
  OpClass forwardClass = OpClass::Elementwise,
          backwardClass = OpClass::Elementwise;
  LinearCost f[5];
};

class PlanPricer {
public:
  /// `microBatches`: the plan's `spmd.micro_batches`; the problem's
  /// objective is then the step time / m (what runs once per step, the
  /// sync of whole gradients and the optimizer, counts 1/m).
  PlanPricer(const MeshLayout &layout, const ClusterSpec &spec,
             const EvalOptions &options, const PlanSegments &segs,
             const Ratios &at, int64_t microBatches)
      : layout(layout), spec(spec), options(options), segs(segs), at(at),
        perStep(1 / double(microBatches)),
        collectives(spec, options.collectives, at), n(layout.numDevices()),
        reps(layout.representatives()), compute(n), comm(n), stored(n),
        grads(n), opt(n), kept(n), transient(n, {-1.0, LinearCost()}),
        optimizerElements(n), afterUpdate(n), runBytes(n) {}

  llvm::Error run(mlir::func::FuncOp func);
  RatioProblem finish();

private:
  double elementBytes(RankedTensorType type) const {
    if (type.getElementType().isa<mlir::FloatType>())
      return bytesPerElement(options.dtype);
    return std::max(1u, type.getElementTypeBitWidth() / 8);
  }
  DistAttr distOf(Value v) const {
    DistAttr d = getDist(v);
    return d ? d : DistAttr::replicated(v.getContext(), layout.numAxes());
  }
  LinearCost extentForm(RankedTensorType type, DistAttr dist, unsigned dim,
                        unsigned d);
  ShapeForm shapeForm(RankedTensorType type, DistAttr dist, unsigned d) {
    ShapeForm s;
    for (unsigned i = 0; i < type.getRank(); ++i)
      s.push_back(extentForm(type, dist, i, d));
    return s;
  }
  LinearCost elementsForm(llvm::ArrayRef<LinearCost> shape);
  LinearCost bytesForm(Value v, DistAttr dist, unsigned d) {
    auto type = v.getType().cast<RankedTensorType>();
    return scaledCost(elementsForm(shapeForm(type, dist, d)),
                      elementBytes(type));
  }
  WorkForms workOf(graph::CostOpInterface op,
                   llvm::ArrayRef<ShapeForm> operands,
                   llvm::ArrayRef<ShapeForm> results);
  void priceAlong(Collective kind, AxisMask axes,
                  llvm::function_ref<LinearCost(unsigned)> bytesOf,
                  CollectiveChoice choice, std::vector<Form> &into);
  /// The all-reduces inside the recipe (weft/Spmd/RecipeStats.h).
  void priceRecipeStats(LocalOp op, bool grad);
  void noteTransient(unsigned d, const LinearCost &bytes) {
    double v = valueAt(bytes, at);
    if (v > transient[d].first)
      transient[d] = {v, bytes};
  }

  void visitParameter(ParameterOp op);
  llvm::Error visitRelayout(Operation *op);
  void visitLocal(LocalOp op);
  void visitTopLevelGraphOp(Operation *op);
  /// Returns whether any op was timed.
  bool priceCompute(Operation *op, mlir::Region *region, bool backward);
  /// What `op` adds on one device: compute, kept bytes, bytes saved for a
  /// recomputed run, the largest produced buffer, and whether any op in it
  /// costs time.
  struct DeviceWork {
    Form compute;
    LinearCost kept, run, produced;
    bool timed = false;
  };
  /// The work of `op` on a device of `type` whose region operands and
  /// results (in order) have the shard shapes `signature`.
  DeviceWork workOnDevice(Operation *op, mlir::Region *region, bool backward,
                          const DeviceType &type,
                          llvm::ArrayRef<ShapeForm> signature);
  void consume(Value v);
  void closeStep(llvm::StringRef label);

  const MeshLayout &layout;
  const ClusterSpec &spec;
  const EvalOptions &options;
  /// Weight of what runs once per step (1 / micro-batches).
  double perStep;
  const PlanSegments &segs;
  const Ratios &at;
  CollectiveForms collectives;
  unsigned n;
  /// One device per orbit (MeshLayout::representatives): only these are
  /// priced, the per-device vectors are left empty for the others.
  llvm::ArrayRef<unsigned> reps;
  bool linearized = false;
  std::vector<Step> steps;
  std::vector<Form> compute, comm;
  std::vector<LinearCost> stored, grads, opt, kept;
  std::vector<std::pair<double, LinearCost>> transient;
  std::vector<LinearCost> optimizerElements;
  std::vector<Form> afterUpdate;
  llvm::DenseSet<Value> needsGradient, zero3Values;
  llvm::DenseMap<Value, std::vector<Form>> pendingSync;
  /// Recomputation (docs/Synthesis.md): the open run's saved bytes.
  std::vector<LinearCost> runBytes;
  RecomputeRun runs;
  bool recomputing = false;
  void closeRun() {
    for (unsigned d : reps)
      noteTransient(d, runBytes[d]);
    runBytes.assign(n, LinearCost());
  }
  /// Devices per class agreeing with a device on some axes.
  std::map<std::pair<AxisMask, unsigned>, std::vector<unsigned>> agreeing;
  /// costTermsOf memo: op and concrete shapes.
  std::map<std::pair<Operation *, std::vector<int64_t>>, Work> workMemo;
};

} // namespace

LinearCost PlanPricer::extentForm(RankedTensorType type, DistAttr dist,
                                  unsigned dim, unsigned d) {
  AxisMask mask = 0;
  int64_t segment = -1;
  for (auto [a, entry] : llvm::enumerate(dist.getAxes()))
    if (entry.isGather() && entry.dim == int64_t(dim)) {
      mask |= 1u << a;
      segment = entry.segment;
    }
  int ps = mask ? segs.problemSegmentOf(segment) : -1;
  if (ps < 0)
    return constantCost(
        double(layout.shardExtent(type, dist, dim, d))); // fixed or whole
  auto [it, inserted] = agreeing.try_emplace({mask, d});
  if (inserted) {
    it->second.assign(segs.classCounts.size(), 0);
    for (unsigned y = 0; y < n; ++y) {
      bool same = true;
      for (unsigned a = 0; a < layout.numAxes() && same; ++a)
        if (mask & (1u << a))
          same = layout.coord(y, a) == layout.coord(d, a);
      if (same)
        ++it->second[layout.meshClass(y)];
    }
  }
  double extent =
      double(segs.segments[segs.indexOfId.lookup(segment)].getExtent());
  LinearCost out;
  for (auto [c, count] : llvm::enumerate(it->second))
    if (count)
      out.terms.push_back({unsigned(ps), unsigned(c), extent * count});
  return out;
}

LinearCost PlanPricer::elementsForm(llvm::ArrayRef<LinearCost> shape) {
  double constant = 1;
  llvm::SmallVector<const LinearCost *, 2> varying;
  for (const LinearCost &e : shape) {
    if (e.terms.empty())
      constant *= e.constant;
    else
      varying.push_back(&e);
  }
  if (varying.empty())
    return constantCost(constant);
  if (varying.size() == 1)
    return scaledCost(*varying[0], constant);
  // A product of node-axis splits: its tangent at the current ratios.
  linearized = true;
  llvm::SmallVector<double, 2> v;
  double product = constant;
  for (const LinearCost *e : varying) {
    v.push_back(valueAt(*e, at));
    product *= v.back();
  }
  LinearCost out = constantCost(product);
  for (unsigned i = 0; i < varying.size(); ++i) {
    double others = constant;
    for (unsigned j = 0; j < varying.size(); ++j)
      if (j != i)
        others *= v[j];
    addScaled(out, *varying[i], others);
    out.constant -= others * v[i];
  }
  return out;
}

WorkForms PlanPricer::workOf(graph::CostOpInterface op,
                             llvm::ArrayRef<ShapeForm> operands,
                             llvm::ArrayRef<ShapeForm> results) {
  // Varying dims, grouped by proportional forms (one parameter each): a dim
  // is factor · p where p is the form divided by its first coefficient.
  struct DimRef {
    int param = -1;
    double factor = 0, constant = 0;
  };
  std::vector<std::string> paramKeys;
  std::vector<LinearCost> params;
  auto classify = [&](const LinearCost &e) {
    DimRef r;
    if (e.terms.empty()) {
      r.constant = e.constant;
      return r;
    }
    double c0 = e.terms[0].coef;
    LinearCost p = scaledCost(e, 1 / c0);
    std::string k = linearKey(p);
    auto it = llvm::find(paramKeys, k);
    r.param = int(it - paramKeys.begin());
    if (it == paramKeys.end()) {
      paramKeys.push_back(k);
      params.push_back(p);
    }
    r.factor = c0;
    return r;
  };
  std::vector<std::vector<DimRef>> opRefs, resRefs;
  for (const ShapeForm &s : operands) {
    opRefs.emplace_back();
    for (const LinearCost &e : s)
      opRefs.back().push_back(classify(e));
  }
  for (const ShapeForm &s : results) {
    resRefs.emplace_back();
    for (const LinearCost &e : s)
      resRefs.back().push_back(classify(e));
  }
  auto evaluate = [&](llvm::ArrayRef<double> values) -> Work {
    std::vector<int64_t> flat;
    graph::ShardShapes s;
    auto fill = [&](mlir::ValueRange vals,
                    const std::vector<std::vector<DimRef>> &refs,
                    llvm::SmallVectorImpl<graph::TensorShape> &into) {
      for (auto [v, r] : llvm::zip(vals, refs)) {
        graph::TensorShape t = graph::TensorShape::of(v.getType());
        for (unsigned i = 0; i < r.size(); ++i) {
          double x =
              r[i].param < 0 ? r[i].constant : r[i].factor * values[r[i].param];
          t.dims[i] = std::max<int64_t>(0, std::llround(x));
          flat.push_back(t.dims[i]);
        }
        into.push_back(t);
      }
    };
    fill(op->getOperands(), opRefs, s.operands);
    fill(op->getResults(), resRefs, s.results);
    auto [it, inserted] = workMemo.try_emplace({op.getOperation(), flat});
    if (inserted) {
      OpCostTerms terms = costTermsOf(op, s, options.dtype);
      Work &w = it->second;
      w.forwardClass = terms.forward.opClass;
      w.backwardClass = terms.backward.opClass;
      w.v[0] = terms.forward.flops;
      w.v[1] = terms.forward.bytes;
      w.v[2] = terms.backward.flops;
      w.v[3] = terms.backward.bytes;
      w.v[4] = terms.keptBytes;
    }
    return it->second;
  };
  WorkForms out;
  unsigned m = params.size();
  const double K = 64;
  if (m == 0) {
    Work w = evaluate({});
    out.forwardClass = w.forwardClass;
    out.backwardClass = w.backwardClass;
    for (int i = 0; i < 5; ++i)
      out.f[i] = constantCost(w.v[i]);
    return out;
  }
  if (m == 1) {
    // Affine in the one parameter: probe at K and 2K, check at 3K.
    Work w1 = evaluate({K}), w2 = evaluate({2 * K}), w3 = evaluate({3 * K});
    bool affine = true;
    for (int i = 0; i < 5; ++i)
      affine &= std::fabs(w3.v[i] - (2 * w2.v[i] - w1.v[i])) <=
                1e-9 * std::max(1.0, std::fabs(w3.v[i]));
    if (affine) {
      out.forwardClass = w1.forwardClass;
      out.backwardClass = w1.backwardClass;
      for (int i = 0; i < 5; ++i) {
        double slope = (w2.v[i] - w1.v[i]) / K;
        out.f[i] = scaledCost(params[0], slope);
        out.f[i].constant += w1.v[i] - slope * K;
      }
      return out;
    }
  }
  // Tangent at the current ratios (finite differences per parameter).
  linearized = true;
  std::vector<double> v0;
  for (const LinearCost &p : params)
    v0.push_back(valueAt(p, at));
  Work w0 = evaluate(v0);
  out.forwardClass = w0.forwardClass;
  out.backwardClass = w0.backwardClass;
  for (int i = 0; i < 5; ++i)
    out.f[i] = constantCost(w0.v[i]);
  for (unsigned p = 0; p < m; ++p) {
    double h = std::max(K, v0[p]);
    std::vector<double> v1 = v0;
    v1[p] += h;
    Work w1 = evaluate(v1);
    for (int i = 0; i < 5; ++i) {
      double slope = (w1.v[i] - w0.v[i]) / h;
      addScaled(out.f[i], params[p], slope);
      out.f[i].constant -= slope * v0[p];
    }
  }
  return out;
}

void PlanPricer::priceAlong(Collective kind, AxisMask axes,
                            llvm::function_ref<LinearCost(unsigned)> bytesOf,
                            CollectiveChoice choice, std::vector<Form> &into) {
  if (layout.sizeOf(axes) <= 1 || !communicates(kind))
    return;
  std::vector<bool> done(n);
  for (unsigned d : reps) {
    if (done[d])
      continue;
    llvm::ArrayRef<unsigned> group = layout.groupOf(d, axes);
    llvm::ArrayRef<unsigned> cluster = layout.clusterGroupOf(d, axes);
    std::vector<LinearCost> bytes;
    for (unsigned y : group)
      bytes.push_back(bytesOf(layout.representativeOf(y)));
    const Form &t = collectives.time(kind, cluster, bytes, choice);
    for (unsigned y : group) {
      if (layout.representativeOf(y) == y)
        into[y].add(t);
      done[y] = true;
    }
  }
}

void PlanPricer::visitParameter(ParameterOp op) {
  auto strategy = parseParamStrategy(op.getStrategy());
  const StrategyDual &dual = dualOf(*strategy);
  Value v = op.getResult();
  DistAttr dist = op.getDist();
  AxisMask idAxes = 0;
  for (auto [a, e] : llvm::enumerate(dist.getAxes()))
    if (e.isIdentity())
      idAxes |= 1u << a;
  double idSize = double(layout.sizeOf(idAxes));
  double gb = gradientBytesPerElement(options.dtype);
  double pb = parameterBytesPerElement(options.dtype);
  std::vector<LinearCost> elements(n);
  auto type = v.getType().cast<RankedTensorType>();
  for (unsigned d : reps) {
    elements[d] = elementsForm(shapeForm(type, dist, d));
    addScaled(stored[d], elements[d]);
    if (!dual.trainable)
      continue;
    addScaled(grads[d], elements[d], dual.gradientSharded ? 1 / idSize : 1);
    double o = dual.optimizerSharded ? 1 / idSize : 1;
    addScaled(opt[d], elements[d], o);
    addScaled(optimizerElements[d], elements[d], o);
  }
  if (!dual.trainable)
    return;
  needsGradient.insert(v);
  if (dual.regatherInBackward)
    zero3Values.insert(v);
  std::vector<Form> sync(n);
  CollectiveChoice best;
  best.bestAllReduce = true;
  if (dual.gradientSync == Collective::AllReduce)
    priceAlong(
        Collective::AllReduce, idAxes,
        [&](unsigned d) { return scaledCost(elements[d], gb); }, best, sync);
  else
    priceAlong(
        dual.gradientSync, idAxes,
        [&](unsigned d) { return scaledCost(elements[d], gb / idSize); }, best,
        sync);
  // Whole gradients (replicated, ZeRO-1) sync once per step.
  if (!dual.gradientSharded)
    for (Form &f : sync)
      f.scale(perStep);
  priceAlong(
      dual.afterUpdate, idAxes,
      [&](unsigned d) { return scaledCost(elements[d], pb / idSize); }, best,
      afterUpdate);
  pendingSync[v] = std::move(sync);
}

void PlanPricer::consume(Value v) {
  auto it = pendingSync.find(v);
  if (it == pendingSync.end())
    return;
  for (unsigned d : reps)
    comm[d].add(it->second[d]);
  pendingSync.erase(it);
}

llvm::Error PlanPricer::visitRelayout(Operation *op) {
  std::optional<CollectiveDual> dual = dualOf(op);
  if (!dual)
    return badInput("the evaluator does not know '{0}'",
                    op->getName().getStringRef().str());
  if (llvm::isa<SendOp, RecvOp>(op))
    return llvm::Error::success();
  Value in = op->getOperand(0), res = op->getResult(0);
  DistAttr inDist = distOf(in), outDist = distOf(res);
  unsigned axis = op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
  AxisMask mask = 1u << axis;
  bool grad = needsGradient.contains(in);
  if (grad)
    needsGradient.insert(res);
  if (auto it = pendingSync.find(in); it != pendingSync.end()) {
    std::vector<Form> sync = std::move(it->second);
    pendingSync.erase(it);
    pendingSync[res] = std::move(sync);
  }
  bool zero3 = zero3Values.contains(in);
  if (zero3)
    zero3Values.insert(res);
  CollectiveChoice choice;
  if (auto mode = op->getAttrOfType<mlir::StringAttr>("mode"))
    choice.uneven = mode.getValue() == "grouped" ? UnevenVariant::Grouped
                                                 : UnevenVariant::Padded;
  if (auto algo = op->getAttrOfType<mlir::StringAttr>("algorithm"))
    choice.algo = algo.getValue() == "hierarchical"
                      ? AllReduceAlgo::Hierarchical
                      : AllReduceAlgo::Ring;
  std::vector<LinearCost> inBytes(n), outBytes(n);
  for (unsigned d : reps) {
    inBytes[d] = bytesForm(in, inDist, d);
    outBytes[d] = bytesForm(res, outDist, d);
  }
  bool byResult = dual->forward == Collective::ReduceScatter;
  auto fwdBytes = [&](unsigned d) {
    return byResult ? outBytes[d] : inBytes[d];
  };
  priceAlong(dual->forward, mask, fwdBytes, choice, comm);
  if (grad && communicates(dual->backward)) {
    auto bwdBytes = [&](unsigned d) {
      return dual->reversesLayout ? outBytes[d] : fwdBytes(d);
    };
    priceAlong(dual->backward, mask, bwdBytes, choice, comm);
    if (zero3 && dual->forward == Collective::AllGather &&
        !options.keepGatheredParameters)
      priceAlong(Collective::AllGather, mask, fwdBytes, choice, comm);
  }
  for (unsigned d : reps) {
    if (zero3 && options.keepGatheredParameters &&
        dual->forward == Collective::AllGather)
      addScaled(kept[d], outBytes[d]);
    else
      noteTransient(d, outBytes[d]);
  }
  return llvm::Error::success();
}

/// The shard form of an intermediate result inside a local recipe, as the
/// evaluator's inferShard: each dim takes the form of an operand dim of the
/// same global extent at the same position from the right.
static ShapeForm inferShard(Value result,
                            const llvm::DenseMap<Value, ShapeForm> &shapes) {
  auto type = result.getType().cast<RankedTensorType>();
  ShapeForm dims;
  for (int64_t e : type.getShape())
    dims.push_back(constantCost(double(e)));
  int64_t rank = type.getRank();
  for (int64_t i = 0; i < rank; ++i)
    for (Value operand : result.getDefiningOp()->getOperands()) {
      auto it = shapes.find(operand);
      auto otype = operand.getType().dyn_cast<RankedTensorType>();
      if (it == shapes.end() || !otype)
        continue;
      int64_t j = otype.getRank() - rank + i;
      if (j >= 0 && otype.getDimSize(j) == type.getDimSize(i)) {
        dims[i] = it->second[j];
        break;
      }
    }
  return dims;
}

bool PlanPricer::priceCompute(Operation *op, mlir::Region *region,
                              bool backward) {
  // An op's work on a device is a function of the device type and the
  // shard shapes of the region's operands and results alone, so devices
  // alike in both (one class, one position on the split axes) share it.
  struct Alike {
    const DeviceType *type;
    llvm::SmallVector<ShapeForm, 4> signature;
    DeviceWork work;
  };
  std::vector<Alike> seen;
  auto sameSignature = [](llvm::ArrayRef<ShapeForm> a,
                          llvm::ArrayRef<ShapeForm> b) {
    return a.size() == b.size() &&
           llvm::all_of(llvm::zip(a, b), [](const auto &xy) {
             const ShapeForm &x = std::get<0>(xy), &y = std::get<1>(xy);
             return x.size() == y.size() &&
                    llvm::all_of(llvm::zip(x, y), [](const auto &e) {
                      return identical(std::get<0>(e), std::get<1>(e));
                    });
           });
  };
  bool timed = false;
  for (unsigned d : reps) {
    const DeviceType &type = layout.typeOf(d);
    llvm::SmallVector<ShapeForm, 4> signature;
    if (region) {
      for (Value in : op->getOperands())
        signature.push_back(
            shapeForm(in.getType().cast<RankedTensorType>(), distOf(in), d));
      for (Value res : op->getResults())
        signature.push_back(
            shapeForm(res.getType().cast<RankedTensorType>(), distOf(res), d));
    }
    auto like = llvm::find_if(seen, [&](const Alike &a) {
      return a.type == &type && sameSignature(a.signature, signature);
    });
    if (like == seen.end()) {
      DeviceWork work = workOnDevice(op, region, backward, type, signature);
      seen.push_back({&type, std::move(signature), std::move(work)});
      like = std::prev(seen.end());
    }
    const DeviceWork &w = like->work;
    timed |= w.timed;
    compute[d].add(w.compute);
    addScaled(kept[d], w.kept);
    addScaled(runBytes[d], w.run);
    noteTransient(d, w.produced);
  }
  return timed;
}

PlanPricer::DeviceWork
PlanPricer::workOnDevice(Operation *op, mlir::Region *region, bool backward,
                         const DeviceType &type,
                         llvm::ArrayRef<ShapeForm> signature) {
  DeviceWork out;
  llvm::DenseMap<Value, ShapeForm> shapes;
  auto shapeOf = [&](Value v) -> ShapeForm {
    if (auto it = shapes.find(v); it != shapes.end())
      return it->second;
    ShapeForm s;
    for (int64_t e : v.getType().cast<RankedTensorType>().getShape())
      s.push_back(constantCost(double(e)));
    return s;
  };
  if (region) {
    Operation *yield = region->front().getTerminator();
    unsigned i = 0;
    for (mlir::BlockArgument arg : region->front().getArguments())
      shapes[arg] = signature[i++];
    for (Value yielded : yield->getOperands())
      shapes[yielded] = signature[i++];
  }
  auto priceOne = [&](graph::CostOpInterface cop) {
    llvm::SmallVector<ShapeForm, 4> ins, outs;
    for (Value v : cop->getOperands())
      ins.push_back(shapeOf(v));
    for (Value r : cop->getResults()) {
      if (!shapes.count(r))
        shapes[r] = inferShard(r, shapes);
      outs.push_back(shapes[r]);
      addScaled(out.produced, elementsForm(shapes[r]),
                elementBytes(r.getType().cast<RankedTensorType>()));
    }
    WorkForms w = workOf(cop, ins, outs);
    if (isZero(w.f[0]) && isZero(w.f[1]))
      return;
    out.timed = true;
    auto roofline = [&](OpClass cls, const LinearCost &flops,
                        const LinearCost &bytes) {
      out.compute.addMax(
          {scaledCost(flops, 1 / type.achievedFlops(cls, options.dtype)),
           scaledCost(bytes, 1 / type.achievedMemBandwidth())});
    };
    roofline(w.forwardClass, w.f[0], w.f[1]);
    if (!backward)
      return;
    roofline(w.backwardClass, w.f[2], w.f[3]);
    if (!recomputing) {
      addScaled(out.kept, w.f[4]);
      return;
    }
    roofline(w.forwardClass, w.f[0], w.f[1]);
    addScaled(out.run, w.f[4]);
  };
  if (region)
    region->walk([&](graph::CostOpInterface cop) { priceOne(cop); });
  else if (auto cop = llvm::dyn_cast<graph::CostOpInterface>(op))
    priceOne(cop);
  return out;
}

void PlanPricer::visitLocal(LocalOp op) {
  bool grad = false;
  for (Value in : op.getInputs()) {
    consume(in);
    grad |= needsGradient.contains(in);
  }
  if (grad)
    for (Value r : op.getResults())
      if (r.getType()
              .cast<RankedTensorType>()
              .getElementType()
              .isa<mlir::FloatType>())
        needsGradient.insert(r);
  recomputing = runs.price(
      op, grad, [&] { closeRun(); },
      [&](Value in) {
        for (unsigned d : reps)
          addScaled(kept[d], bytesForm(in, distOf(in), d));
      });
  priceCompute(op, &op.getBody(), grad);
  priceRecipeStats(op, grad);
  recomputing = false;
  closeStep(("local " + op.getVariant()).str());
}

void PlanPricer::priceRecipeStats(LocalOp op, bool grad) {
  Operation *inner = recipeOp(op);
  if (!inner)
    return;
  llvm::SmallVector<RecipeStat, 2> stats =
      recipeStats(inner, op.getVariant(), layout.sizes());
  if (stats.empty())
    return;
  double eb =
      elementBytes(inner->getOperand(0).getType().cast<RankedTensorType>());
  for (const RecipeStat &stat : stats) {
    auto bytesOf = [&](unsigned d) {
      ShapeForm form;
      ShapeForm operand;
      if (stat.operand >= 0) {
        Value in = op.getInputs()[stat.operand];
        operand =
            shapeForm(in.getType().cast<RankedTensorType>(), distOf(in), d);
      }
      for (auto [i, extent] : llvm::enumerate(stat.shape)) {
        int from = i < stat.fromDim.size() ? stat.fromDim[i] : -1;
        form.push_back(from >= 0 && size_t(from) < operand.size()
                           ? operand[from]
                           : constantCost(double(extent)));
      }
      return scaledCost(elementsForm(form), eb);
    };
    priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, comm);
    if (grad && stat.hasDual)
      priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, comm);
    if (recomputing)
      priceAlong(Collective::AllReduce, 1u << stat.axis, bytesOf, {}, comm);
  }
}

void PlanPricer::visitTopLevelGraphOp(Operation *op) {
  bool grad = false;
  for (Value in : op->getOperands()) {
    consume(in);
    grad |= needsGradient.contains(in);
  }
  if (grad)
    for (Value r : op->getResults())
      needsGradient.insert(r);
  if (priceCompute(op, nullptr, grad))
    closeStep(("replicated " + op->getName().getStringRef()).str());
}

void PlanPricer::closeStep(llvm::StringRef label) {
  Step step;
  step.name = label.str();
  unsigned numClasses = segs.classCounts.size();
  step.perClass.resize(numClasses);
  for (unsigned c = 0; c < numClasses; ++c) {
    std::vector<const Form *> comp, com;
    for (unsigned d : reps)
      if (layout.meshClass(d) == c) {
        comp.push_back(&compute[d]);
        com.push_back(&comm[d]);
      }
    Form cf = maxOfForms(comp, at, linearized);
    Form mf = maxOfForms(com, at, linearized);
    StepClassCost &cost = step.perClass[c];
    // Compute rows need non-negative linear parts; tangents may not be.
    bool negative = cf.lin.constant < 0 ||
                    llvm::any_of(cf.lin.terms,
                                 [](const RatioTerm &t) { return t.coef < 0; });
    if (negative) {
      MaxCost m;
      m.pieces.push_back(cf.lin);
      cost.computeMax.push_back(std::move(m));
    } else {
      cost.compute = cf.lin;
    }
    cost.computeMax.append(cf.maxes.begin(), cf.maxes.end());
    cost.comm = mf.lin;
    cost.commMax.append(mf.maxes.begin(), mf.maxes.end());
  }
  steps.push_back(std::move(step));
  compute.assign(n, Form());
  comm.assign(n, Form());
}

llvm::Error PlanPricer::run(mlir::func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (auto p = llvm::dyn_cast<ParameterOp>(op)) {
      visitParameter(p);
      continue;
    }
    if (auto local = llvm::dyn_cast<LocalOp>(op)) {
      visitLocal(local);
      continue;
    }
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    if (op.getDialect() &&
        op.getDialect()->getNamespace() == SpmdDialect::getDialectNamespace()) {
      if (auto err = visitRelayout(&op))
        return err;
      continue;
    }
    if (llvm::isa<graph::CostOpInterface>(op)) {
      visitTopLevelGraphOp(&op);
      continue;
    }
    return badInput("the evaluator does not know '{0}'",
                    op.getName().getStringRef().str());
  }
  closeRun();
  for (auto &[v, sync] : pendingSync)
    for (unsigned d : reps)
      comm[d].add(sync[d]);
  pendingSync.clear();
  if (llvm::any_of(comm, [](const Form &f) { return !f.empty(); }))
    closeStep("collectives");
  return llvm::Error::success();
}

RatioProblem PlanPricer::finish() {
  // The optimizer: an elementwise pass over the state each device updates,
  // then the ZeRO all-gathers of updated shards.
  double p = parameterBytesPerElement(options.dtype);
  double g = gradientBytesPerElement(options.dtype);
  double o = optimizerBytesPerElement(options.optimizer, options.dtype);
  double flopsPerElement = options.optimizer == Optimizer::Adam       ? 12
                           : options.optimizer == Optimizer::Momentum ? 4
                                                                      : 2;
  for (unsigned d : reps) {
    const DeviceType &type = layout.typeOf(d);
    compute[d].addMax(
        {scaledCost(optimizerElements[d],
                    flopsPerElement / type.achievedFlops(OpClass::Elementwise,
                                                         options.dtype)),
         scaledCost(optimizerElements[d],
                    (2 * p + g + 2 * o) / type.achievedMemBandwidth())},
        perStep);
    comm[d] = afterUpdate[d];
    comm[d].scale(perStep);
  }
  closeStep("optimizer");

  RatioProblem problem;
  problem.linearized = linearized || collectives.linearized;
  problem.objectiveScale = 1 / perStep;
  MeshAttr mesh = layout.mesh();
  for (auto [c, count] : llvm::enumerate(segs.classCounts)) {
    ratio::DeviceClass cls;
    auto attr = mesh.getClasses()[c].cast<DeviceClassAttr>();
    cls.name = (attr.getType() + "#" + llvm::Twine(c)).str();
    cls.count = count;
    problem.classes.push_back(std::move(cls));
  }
  for (unsigned group : segs.freeGroups) {
    const SegmentGroup &sg = segs.groups[group];
    Segment s;
    s.name = "segment";
    for (unsigned m : sg.members)
      s.name += " " + std::to_string(segs.segments[m].getId());
    s.extent = sg.baseExtent;
    s.alignment = sg.alignment;
    problem.segments.push_back(std::move(s));
  }
  // Memory: the device of each class with the most bytes at the current
  // ratios (devices of one class hold the same shards in every plan the
  // baselines and the search write).
  unsigned numClasses = segs.classCounts.size();
  problem.memory.resize(numClasses);
  std::vector<double> worst(numClasses, -1);
  for (unsigned d : reps) {
    LinearCost m;
    addScaled(m, stored[d], p);
    addScaled(m, grads[d], g);
    addScaled(m, opt[d], o);
    addScaled(m, kept[d]);
    addScaled(m, transient[d].second);
    unsigned c = layout.meshClass(d);
    double v = valueAt(m, at);
    if (v > worst[c]) {
      worst[c] = v;
      problem.memory[c] = std::move(m);
    }
    double cap =
        layout.typeOf(d).memoryBytes() * (1 - options.reservedMemoryFraction);
    problem.classes[c].memoryCapacity =
        std::min(problem.classes[c].memoryCapacity, cap);
  }
  // Identical steps collapsed.
  problem.steps = std::move(steps);
  CollapsedSteps collapsed = collapseSteps(problem);
  std::vector<Step> distinct;
  for (auto [i, rep] : llvm::enumerate(collapsed.representative)) {
    Step s = problem.steps[rep];
    s.multiplicity = collapsed.multiplicity[i];
    distinct.push_back(std::move(s));
  }
  problem.steps = std::move(distinct);
  return problem;
}

llvm::Expected<Ratios> weft::ratio::planRatios(mlir::ModuleOp plan) {
  auto segs = analyzeSegments(plan);
  if (!segs)
    return segs.takeError();
  Ratios out;
  for (unsigned group : segs->freeGroups) {
    auto seg = segs->segments[segs->groups[group].members[0]];
    auto r = seg.getRatios().asArrayRef();
    out.emplace_back(r.begin(), r.end());
  }
  return out;
}

llvm::Expected<RatioProblem>
weft::ratio::ratioProblemFromPlan(mlir::ModuleOp plan, const ClusterSpec &spec,
                                  const EvalOptions &options) {
  auto segs = analyzeSegments(plan);
  if (!segs)
    return segs.takeError();
  auto layout = MeshLayout::get(plan, spec, options.foldDevices);
  if (!layout)
    return layout.takeError();
  auto at = planRatios(plan);
  if (!at)
    return at.takeError();
  auto func = llvm::cast<mlir::func::FuncOp>(planFunction(plan));
  PlanPricer pricer(*layout, spec, options, *segs, *at,
                    SpmdDialect::getMicroBatches(plan));
  if (auto err = pricer.run(func))
    return std::move(err);
  RatioProblem problem = pricer.finish();
  if (auto err = problem.check())
    return makeError(ExitInternal,
                     "the ratio problem of the plan is malformed: {0}",
                     llvm::toString(std::move(err)));
  return problem;
}
