//===- RatioFromPlan.cpp - The ratio problem of an spmd plan --------------===//
//
// The ratio problem's Domain of eval::PlanWalk: the same walk as the
// evaluator's (same steps, gradient bookkeeping and parameter strategies),
// but every per-device quantity is a form in the ratios instead of a number:
// shard extents are linear in the ratios (a device holds the sum of the
// shares of the devices that agree with it on the split axes), op work is
// probed with costTermsOf along that line, collective times come from
// CollectiveForms.
//
//===----------------------------------------------------------------------===//

#include "weft/Eval/RatioFromPlan.h"
#include "CollectiveForms.h"
#include "PlanSegments.h"
#include "ShardInference.h"
#include "weft/Analysis/GraphCostModel.h"
#include "weft/Eval/PlanWalk.h"
#include "weft/Ratio/CostKey.h"
#include "weft/Ratio/StepCollapse.h"
#include <cmath>

using namespace weft;
using namespace weft::eval;
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

/// Bytes are linear in the ratios; times are convex piecewise-linear forms.
class PlanPricer : public DomainBase<LinearCost, Form> {
public:
  /// `microBatches`: the plan's `spmd.micro_batches`; the problem's
  /// objective is then the step time / m (what runs once per step, the
  /// sync of whole gradients and the optimizer, counts 1/m).
  PlanPricer(const MeshLayout &layout, const ClusterSpec &spec,
             const EvalOptions &options, const PlanSegments &segs,
             const Ratios &at, int64_t microBatches)
      : DomainBase(layout, spec, options), segs(segs), at(at),
        perStep(1 / double(microBatches)),
        collectives(spec, options.collectives, at), compute_(n), comm(n),
        stored(n), grads(n), opt(n), kept(n),
        transient(n, {-1.0, LinearCost()}), optimizerElements(n),
        afterUpdate(n), runBytes(n) {}

  llvm::Error run(mlir::func::FuncOp func);
  RatioProblem finish();

  // The Domain of PlanWalk (weft/Eval/PlanWalk.h).
  LinearCost bytesOf(Value v, DistAttr dist, unsigned d) {
    auto type = v.getType().cast<RankedTensorType>();
    return scaledCost(elementsForm(shapeForm(type, dist, d)),
                      elementBytes(type, options.dtype));
  }
  LinearCost elementsOf(RankedTensorType type, DistAttr dist, unsigned d) {
    return elementsForm(shapeForm(type, dist, d));
  }
  static LinearCost syncBytes(const LinearCost &elements,
                              const StrategyCost &cost) {
    return scaledCost(elements, cost.syncScale());
  }
  static LinearCost afterUpdateBytes(const LinearCost &elements,
                                     const StrategyCost &cost) {
    return scaledCost(elements, cost.afterUpdateScale());
  }
  LinearCost recipeBytes(LocalOp op, const RecipeStat &stat, unsigned d,
                         double elementBytes);
  const Form &collectiveTime(Collective kind, llvm::ArrayRef<unsigned> group,
                             llvm::ArrayRef<LinearCost> bytes,
                             CollectiveVariant variant) {
    return collectives.time(kind, group, bytes, variant);
  }
  static void addTime(Form &into, const Form &t) { into.add(t); }
  /// Every collective adds to the step's communication as it is priced,
  /// but the gathers after the optimizer step.
  Times &slot(Slot s) { return s == Slot::AfterUpdate ? afterUpdate : comm; }
  static void relayoutPriced(Operation *, unsigned,
                             llvm::ArrayRef<LinearCost>) {}
  static void recipePriced() {}
  void holdParameter(unsigned d, const LinearCost &elements,
                     const StrategyCost &cost) {
    addScaled(stored[d], elements);
    if (!cost.trainable())
      return;
    addScaled(grads[d], elements, cost.gradientShare());
    addScaled(opt[d], elements, cost.optimizerShare());
    addScaled(optimizerElements[d], elements, cost.optimizerShare());
  }
  /// The objective is per micro-batch: a sync that runs once per step
  /// counts 1/m.
  void adjustSync(Times &sync, bool once) {
    if (once)
      for (Form &f : sync)
        f.scale(perStep);
  }
  void chargeSync(const Times &sync, bool) {
    for (unsigned d : reps)
      comm[d].add(sync[d]);
  }
  void keep(unsigned d, const LinearCost &bytes) { addScaled(kept[d], bytes); }
  void transientBytes(unsigned d, const LinearCost &bytes) {
    double v = valueAt(bytes, at);
    if (v > transient[d].first)
      transient[d] = {v, bytes};
  }
  void closeRun() {
    for (unsigned d : reps)
      transientBytes(d, runBytes[d]);
    runBytes.assign(n, LinearCost());
  }
  /// Returns whether any op was timed.
  bool compute(Operation *op, mlir::Region *region, bool backward,
               bool recomputing);
  void closeStep(llvm::StringRef label);

private:
  LinearCost extentForm(RankedTensorType type, DistAttr dist, unsigned dim,
                        unsigned d);
  ShapeForm shapeForm(RankedTensorType type, DistAttr dist, unsigned d) {
    ShapeForm s;
    for (unsigned i = 0; i < type.getRank(); ++i)
      s.push_back(extentForm(type, dist, i, d));
    return s;
  }
  LinearCost elementsForm(llvm::ArrayRef<LinearCost> shape);
  WorkForms workOf(graph::CostOpInterface op,
                   llvm::ArrayRef<ShapeForm> operands,
                   llvm::ArrayRef<ShapeForm> results);
  DistAttr distOf(Value v) const {
    return distOrReplicated(v, layout.numAxes());
  }
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

  const PlanSegments &segs;
  const Ratios &at;
  /// Weight of what runs once per step (1 / micro-batches).
  double perStep;
  CollectiveForms collectives;
  bool linearized = false;
  /// The local being priced recomputes.
  bool recomputing = false;
  std::vector<Step> steps;
  std::vector<Form> compute_, comm;
  std::vector<LinearCost> stored, grads, opt, kept;
  std::vector<std::pair<double, LinearCost>> transient;
  std::vector<LinearCost> optimizerElements;
  std::vector<Form> afterUpdate;
  /// Recomputation (docs/Synthesis.md): the open run's saved bytes.
  std::vector<LinearCost> runBytes;
  /// Devices per class agreeing with a device on some axes.
  std::map<std::pair<AxisMask, unsigned>, std::vector<unsigned>> agreeing;
  /// costTermsOf memo: op and concrete shapes.
  std::map<std::pair<Operation *, std::vector<int64_t>>, Work> workMemo;
};

} // namespace

LinearCost PlanPricer::extentForm(RankedTensorType type, DistAttr dist,
                                  unsigned dim, unsigned d) {
  auto [mask, segment] = MeshLayout::splitOf(dist, dim);
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

bool PlanPricer::compute(Operation *op, mlir::Region *region, bool backward,
                         bool recomputingNow) {
  recomputing = recomputingNow;
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
    compute_[d].add(w.compute);
    addScaled(kept[d], w.kept);
    addScaled(runBytes[d], w.run);
    transientBytes(d, w.produced);
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
        shapes[r] = inferShard(
            r, shapes, [](int64_t e) { return constantCost(double(e)); });
      outs.push_back(shapes[r]);
      addScaled(
          out.produced, elementsForm(shapes[r]),
          elementBytes(r.getType().cast<RankedTensorType>(), options.dtype));
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

LinearCost PlanPricer::recipeBytes(LocalOp op, const RecipeStat &stat,
                                   unsigned d, double elementBytes) {
  ShapeForm form;
  ShapeForm operand;
  if (stat.operand >= 0) {
    Value in = op.getInputs()[stat.operand];
    operand = shapeForm(in.getType().cast<RankedTensorType>(), distOf(in), d);
  }
  for (auto [i, extent] : llvm::enumerate(stat.shape)) {
    int from = i < stat.fromDim.size() ? stat.fromDim[i] : -1;
    form.push_back(from >= 0 && size_t(from) < operand.size()
                       ? operand[from]
                       : constantCost(double(extent)));
  }
  return scaledCost(elementsForm(form), elementBytes);
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
        comp.push_back(&compute_[d]);
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
  compute_.assign(n, Form());
  comm.assign(n, Form());
}

llvm::Error PlanPricer::run(mlir::func::FuncOp func) {
  PlanWalk<PlanPricer> walk(*this, layout, options);
  if (auto err = walk.run(func))
    return err;
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
  OpWork perElement = optimizerUpdateWork(1, options.optimizer, options.dtype);
  for (unsigned d : reps) {
    const DeviceType &type = layout.typeOf(d);
    compute_[d].addMax(
        {scaledCost(optimizerElements[d],
                    perElement.flops / type.achievedFlops(OpClass::Elementwise,
                                                          options.dtype)),
         scaledCost(optimizerElements[d],
                    perElement.bytes / type.achievedMemBandwidth())},
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
                                  const EvalOptions &planOptions) {
  EvalOptions options = optionsFor(plan, planOptions);
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
