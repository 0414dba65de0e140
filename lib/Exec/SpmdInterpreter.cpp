//===- SpmdInterpreter.cpp - Run an spmd plan on N virtual devices --------===//

#include "weft/Exec/SpmdInterpreter.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/TypeSwitch.h"
#include <deque>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::DistAttr;
using spmd::ShardGeometry;

struct SpmdInterpreter::Impl {
  mlir::ModuleOp plan;
  mlir::func::FuncOp main;
  ShardGeometry geo;
  SpmdRunOptions options;
  std::unique_ptr<mlir::Block> scratch;
  llvm::DenseMap<mlir::Operation *, std::unique_ptr<LocalStep>> steps;
  llvm::DenseMap<mlir::Value, DistValue> values;
  llvm::DenseSet<mlir::Value> needsGrad;
  mlir::Value lossValue;
  double loss = 0;
  std::vector<ParameterGradient> paramGrads;
  /// Values in flight between pipeline stages (send → recv), in order.
  std::deque<DistValue> sent;
  std::deque<DistValue> sentBack;
  /// A stage of a pipelined plan (setStage): recvs read `inbox`, sends
  /// read their gradients from `gradientInbox`.
  bool staged = false;
  std::deque<DistValue> inbox, gradientInbox;
  /// Gradients kept with SpmdRunOptions::keepGradients.
  llvm::DenseMap<mlir::Value, std::vector<Tensor>> keptGrads;
  /// Per (op, operand): what its backward added (keepGradients).
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, std::vector<Tensor>>
      contributions;
  void keepContribution(mlir::Operation *op, unsigned operand, mlir::Value v,
                        const std::vector<Tensor> &g) {
    if (options.keepGradients && needsGrad.contains(v) && !g.empty())
      contributions[{op, operand}] = g;
  }

  ~Impl() {
    for (auto &[op, step] : steps)
      for (mlir::Operation *c : step->clones)
        c->destroy();
  }

  llvm::Error forwardOp(mlir::Operation &op, const Bindings &whole);
  llvm::Error backwardOp(mlir::Operation &op,
                         llvm::DenseMap<mlir::Value, std::vector<Tensor>> &g);
  /// The reverse pass from the gradients in `grads`.
  llvm::Error
  backwardFrom(llvm::DenseMap<mlir::Value, std::vector<Tensor>> &grads);
  llvm::Error syncParameter(spmd::ParameterOp op, std::vector<Tensor> grads);
  /// Exit 3 when `op`'s relayout asks a device for a piece its group does
  /// not hold (SpmdKernels.h, unreachableDevice).
  llvm::Error checkReachable(mlir::Operation *op, DistAttr from,
                             mlir::Value result, DistAttr to,
                             spmd::MeshAxes axes, Exchange how,
                             llvm::StringRef pass) {
    auto shape = result.getType().cast<mlir::RankedTensorType>().getShape();
    std::optional<unsigned> x =
        unreachableDevice(geo, shape, from, to, axes, how);
    if (!x)
      return llvm::Error::success();
    std::string held;
    llvm::SmallVector<unsigned, 8> readers{*x};
    if (how != Exchange::Own)
      readers = geo.groupAlong(*x, axes);
    for (unsigned y : readers)
      held +=
          (held.empty() ? "" : ", ") + boxString(geo.shardBox(shape, from, y));
    return makeError(
        ExitVerifyFailed,
        "{0} ({1}): device {2} must hold {3} of the value, which {4} ({5}); "
        "a dim split on several mesh axes is split major axis first and "
        "gathered minor axis first",
        describeOp(op), pass, *x, boxString(geo.shardBox(shape, to, *x)),
        how == Exchange::Own ? "is not a slice of what it holds"
                             : "the devices of its group do not hold",
        held);
  }
  std::vector<Tensor> relayout(const DistValue &in, mlir::Value result,
                               DistAttr to, spmd::MeshAxes axes, Exchange how) {
    if (how == Exchange::Copy && in.dist == to)
      return in.materialized();
    auto type = result.getType().cast<mlir::RankedTensorType>();
    ElementType et = *elementTypeOf(type);
    if (!in.alias.empty())
      return exchange(geo, type.getShape(), et, in.materialized(), in.dist, to,
                      axes, how);
    return exchange(geo, type.getShape(), et, in.shards, in.dist, to, axes,
                    how);
  }
};

SpmdInterpreter::SpmdInterpreter() : impl(std::make_unique<Impl>()) {}
SpmdInterpreter::~SpmdInterpreter() = default;

const ShardGeometry &SpmdInterpreter::geometry() const { return impl->geo; }
mlir::func::FuncOp SpmdInterpreter::getMain() { return impl->main; }

llvm::Expected<std::unique_ptr<SpmdInterpreter>>
SpmdInterpreter::create(mlir::ModuleOp plan, SpmdRunOptions options) {
  std::unique_ptr<SpmdInterpreter> self(new SpmdInterpreter());
  Impl &im = *self->impl;
  im.plan = plan;
  im.options = std::move(options);
  auto geo = ShardGeometry::get(plan);
  if (!geo)
    return geo.takeError();
  im.geo = std::move(*geo);
  im.main = plan.lookupSymbol<mlir::func::FuncOp>("main");
  if (!im.main || im.main.isExternal())
    return badInput("the plan has no func.func @main");
  im.scratch = std::make_unique<mlir::Block>();
  uint64_t dropouts = im.options.firstDropoutId;
  for (mlir::Operation &op : im.main.getBody().front()) {
    auto local = llvm::dyn_cast<spmd::LocalOp>(op);
    if (!local)
      continue;
    auto step = std::make_unique<LocalStep>();
    step->local = local;
    if (auto err = prepareLocal(*step, im.geo, *im.scratch))
      return std::move(err);
    if (llvm::isa<g::DropoutOp>(step->inner))
      step->dropoutId = dropouts++;
    im.steps[local] = std::move(step);
  }
  return self;
}

/// Checks a whole leaf value against the plan's global type.
static llvm::Error checkWhole(const Tensor &t, mlir::Type type,
                              llvm::StringRef what, llvm::StringRef name) {
  auto ranked = type.cast<mlir::RankedTensorType>();
  if (t.getShape() != ranked.getShape())
    return badInput("{0} '{1}' is {2} in the model but {3} in the plan", what,
                    name, shapeString(t.getShape()),
                    shapeString(ranked.getShape()));
  std::optional<ElementType> et = elementTypeOf(ranked);
  if (!et || isFloatType(*et) != t.isFloat())
    return badInput("{0} '{1}' has another element type in the plan", what,
                    name);
  return llvm::Error::success();
}

/// Every device's shard of a whole value; devices with the same box share
/// one copy (read-only leaves).
static DistValue shardWhole(const ShardGeometry &geo, const Tensor &whole,
                            DistAttr dist) {
  DistValue v;
  v.dist = dist;
  std::vector<spmd::ShardBox> boxes;
  bool aliased = false;
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    spmd::ShardBox box = geo.shardBox(whole.getShape(), dist, x);
    unsigned same = x;
    for (unsigned y = 0; y < x && same == x; ++y)
      if (boxes[y].offsets == box.offsets && boxes[y].extents == box.extents)
        same = v.alias[y];
    v.alias.push_back(same);
    boxes.push_back(box);
    if (same != x) {
      aliased = true;
      v.shards.emplace_back();
      continue;
    }
    v.shards.push_back(extractBox(whole, box));
  }
  if (!aliased)
    v.alias.clear();
  return v;
}

llvm::Error SpmdInterpreter::forward(const Bindings &whole) {
  Impl &im = *impl;
  im.values.clear();
  im.needsGrad.clear();
  im.paramGrads.clear();
  im.sent.clear();
  for (unsigned i = 0; i < im.main.getNumArguments(); ++i) {
    std::string name = i < im.options.inputNames.size()
                           ? im.options.inputNames[i]
                           : "arg" + std::to_string(i);
    auto it = whole.inputs.find(name);
    if (it == whole.inputs.end())
      return badInput("no value bound to input '{0}'", name);
    mlir::Value arg = im.main.getArgument(i);
    if (auto err = checkWhole(it->second, arg.getType(), "input", name))
      return err;
    DistAttr dist = spmd::getDist(arg);
    if (!dist || dist.getAxes().size() != im.geo.numAxes() || dist.isPartial())
      return badInput("input '{0}' of the plan has no valid spmd.dist", name);
    im.values[arg] = shardWhole(im.geo, it->second, dist);
  }
  for (mlir::Operation &op : im.main.getBody().front()) {
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (im.staged && ret.getNumOperands() == 0) {
        im.lossValue = {};
        return llvm::Error::success();
      }
      if (ret.getNumOperands() != 1)
        return badInput("the plan's @main must return one loss");
      im.lossValue = ret.getOperand(0);
      break;
    }
    if (auto err = im.forwardOp(op, whole))
      return err;
  }
  const DistValue *l = lookup(im.lossValue);
  if (!l)
    return badInput("the plan's loss has no value");
  Tensor combined = combinedShard(im.geo, *l, 0);
  if (combined.getNumElements() != 1)
    return badInput("the plan's loss is not a scalar");
  im.loss = combined.at(0);
  return llvm::Error::success();
}

llvm::Error SpmdInterpreter::Impl::forwardOp(mlir::Operation &op,
                                             const Bindings &whole) {
  using llvm::Error;
  auto input = [&](mlir::Value v) -> const DistValue * {
    auto it = values.find(v);
    return it == values.end() ? nullptr : &it->second;
  };
  auto propagate = [&](mlir::Value from, mlir::Value to) {
    if (needsGrad.contains(from) && to.getType()
                                        .cast<mlir::RankedTensorType>()
                                        .getElementType()
                                        .isa<mlir::FloatType>())
      needsGrad.insert(to);
  };
  auto collective = [&](mlir::Operation *c, mlir::Value in, mlir::Value out,
                        DistAttr to, unsigned axis, Exchange how) -> Error {
    const DistValue *v = input(in);
    if (!v)
      return badInput("{0}: operand has no value", describeOp(c));
    if (axis >= geo.numAxes())
      return badInput("{0}: axis {1} is not a mesh axis", describeOp(c), axis);
    if (auto err =
            checkReachable(c, v->dist, out, to, 1u << axis, how, "forward"))
      return err;
    DistValue r;
    r.dist = to;
    r.shards = relayout(*v, out, to, 1u << axis, how);
    values[out] = std::move(r);
    propagate(in, out);
    return Error::success();
  };
  return llvm::TypeSwitch<mlir::Operation *, Error>(&op)
      .Case([&](spmd::ParameterOp p) -> Error {
        llvm::StringRef name = p.getName();
        const Tensor *w = nullptr;
        bool isBuffer = false;
        if (auto it = whole.parameters.find(name); it != whole.parameters.end())
          w = &it->second;
        else if (auto it = whole.buffers.find(name);
                 it != whole.buffers.end()) {
          w = &it->second;
          isBuffer = true;
        }
        if (!w)
          return badInput("spmd.parameter '{0}' is not a parameter of the "
                          "model",
                          name);
        if (auto err = checkWhole(*w, p.getType(), "parameter", name))
          return err;
        values[p.getResult()] = shardWhole(geo, *w, p.getDist());
        if (!isBuffer && p.getStrategy() != spmd::ParamStrategy::Buffer &&
            w->isFloat())
          needsGrad.insert(p.getResult());
        return Error::success();
      })
      .Case([&](g::ConstantOp c) -> Error {
        // Outside a local: replicated on every device.
        auto t = tensorFromAttr(c.getValue());
        if (!t)
          return t.takeError();
        t->convertTo(*elementTypeOf(c.getType()));
        DistValue v;
        v.dist = DistAttr::replicated(c.getContext(), geo.numAxes());
        v.shards.resize(geo.numDevices());
        v.shards[0] = std::move(*t);
        v.alias.assign(geo.numDevices(), 0);
        values[c.getResult()] = std::move(v);
        return Error::success();
      })
      .Case([&](spmd::LocalOp l) -> Error {
        LocalStep &step = *steps[l];
        if (auto err = verifyLocalClones(step))
          return err;
        llvm::SmallVector<const DistValue *, 4> operands;
        bool anyNeeds = false;
        for (mlir::Value v : step.inner->getOperands()) {
          mlir::Value outer =
              l.getOperand(v.cast<mlir::BlockArgument>().getArgNumber());
          const DistValue *dv = input(outer);
          if (!dv)
            return badInput("{0}: operand has no value",
                            describeOp(step.inner));
          operands.push_back(dv);
          anyNeeds |= needsGrad.contains(outer);
        }
        llvm::SmallVector<DistValue, 2> results;
        if (auto err =
                runLocalForward(step, geo, operands, options.seed, results))
          return err;
        for (auto [r, v] : llvm::zip(l.getResults(), results)) {
          if (anyNeeds && r.getType()
                              .cast<mlir::RankedTensorType>()
                              .getElementType()
                              .isa<mlir::FloatType>())
            needsGrad.insert(r);
          values[r] = std::move(v);
        }
        return Error::success();
      })
      .Case([&](spmd::ShardOp s) {
        return collective(s, s.getInput(), s.getResult(), s.getDist(),
                          s.getAxis(), Exchange::Own);
      })
      .Case([&](spmd::AllGatherOp s) {
        return collective(s, s.getInput(), s.getResult(), s.getDist(),
                          s.getAxis(), Exchange::Copy);
      })
      .Case([&](spmd::AllToAllOp s) {
        return collective(s, s.getInput(), s.getResult(), s.getDist(),
                          s.getAxis(), Exchange::Copy);
      })
      .Case([&](spmd::ReduceScatterOp s) {
        return collective(s, s.getInput(), s.getResult(), s.getDist(),
                          s.getAxis(), Exchange::Add);
      })
      .Case([&](spmd::AllReduceOp s) -> Error {
        const DistValue *v = input(s.getInput());
        bool isMax =
            v && s.getAxis() < geo.numAxes() &&
            v->dist.getAxes()[s.getAxis()].kind == spmd::AxisDist::Kind::Max;
        return collective(s, s.getInput(), s.getResult(), s.getDist(),
                          s.getAxis(), isMax ? Exchange::Max : Exchange::Add);
      })
      .Case([&](spmd::SendOp s) -> Error {
        const DistValue *v = input(s.getInput());
        if (!v)
          return badInput("{0}: operand has no value", describeOp(s));
        sent.push_back(*v);
        return Error::success();
      })
      .Case([&](spmd::RecvOp r) -> Error {
        std::deque<DistValue> &from = staged ? inbox : sent;
        if (from.empty())
          return badInput("{0}: nothing was sent before this recv",
                          describeOp(r));
        DistValue v = std::move(from.front());
        from.pop_front();
        if (staged) {
          // Already in this stage's layout (PipelineCheck.cpp).
          values[r.getResult()] = std::move(v);
          needsGrad.insert(r.getResult());
          return Error::success();
        }
        DistValue out;
        out.dist = r.getDist();
        out.shards = relayout(v, r.getResult(), r.getDist(),
                              (1u << geo.numAxes()) - 1, Exchange::Copy);
        values[r.getResult()] = std::move(out);
        needsGrad.insert(r.getResult());
        return Error::success();
      })
      .Default([&](mlir::Operation *o) -> Error {
        return badInput("{0}: not an op of an spmd program", describeOp(o));
      });
}

double SpmdInterpreter::getLoss() const { return impl->loss; }

void SpmdInterpreter::setStage() { impl->staged = true; }
std::deque<DistValue> &SpmdInterpreter::sentValues() { return impl->sent; }
std::deque<DistValue> &SpmdInterpreter::inbox() { return impl->inbox; }
std::deque<DistValue> &SpmdInterpreter::gradientsSentBack() {
  return impl->sentBack;
}
std::deque<DistValue> &SpmdInterpreter::gradientInbox() {
  return impl->gradientInbox;
}

const DistValue *SpmdInterpreter::lookup(mlir::Value v) const {
  auto it = impl->values.find(v);
  return it == impl->values.end() ? nullptr : &it->second;
}

const std::vector<Tensor> *
SpmdInterpreter::lookupGradient(mlir::Value v) const {
  auto it = impl->keptGrads.find(v);
  return it == impl->keptGrads.end() ? nullptr : &it->second;
}

const std::vector<Tensor> *
SpmdInterpreter::lookupContribution(mlir::Operation *op,
                                    unsigned operand) const {
  auto it = impl->contributions.find({op, operand});
  return it == impl->contributions.end() ? nullptr : &it->second;
}

const std::vector<ParameterGradient> &
SpmdInterpreter::getParameterGradients() const {
  return impl->paramGrads;
}

static void accumulate(std::vector<Tensor> &into, std::vector<Tensor> g) {
  if (into.empty()) {
    into = std::move(g);
    return;
  }
  for (size_t x = 0; x < into.size(); ++x) {
    float *o = into[x].floats();
    const float *in = g[x].floats();
    for (int64_t i = 0, e = into[x].getNumElements(); i < e; ++i)
      o[i] += in[i];
  }
}

llvm::Error SpmdInterpreter::backward() {
  Impl &im = *impl;
  llvm::DenseMap<mlir::Value, std::vector<Tensor>> grads;
  if (im.staged && !im.lossValue)
    return im.backwardFrom(grads);
  const DistValue *l = lookup(im.lossValue);
  if (!l)
    return makeError(ExitInternal, "backward() called before forward()");
  // Partial-sum convention: a loss whole on the id axes is counted once in
  // total, 1/|group| on every device of the group.
  float seed =
      float(1.0 / double(im.geo.sizeOf(ShardGeometry::identityAxes(l->dist))));
  std::vector<Tensor> seeds;
  for (unsigned x = 0; x < im.geo.numDevices(); ++x)
    seeds.push_back(Tensor::filled(l->shard(x).getShape(), seed));
  grads[im.lossValue] = std::move(seeds);
  return im.backwardFrom(grads);
}

llvm::Error SpmdInterpreter::Impl::backwardFrom(
    llvm::DenseMap<mlir::Value, std::vector<Tensor>> &grads) {
  Impl &im = *this;
  im.paramGrads.clear();
  im.sentBack.clear();
  mlir::Block &body = im.main.getBody().front();
  im.keptGrads.clear();
  im.contributions.clear();
  for (mlir::Operation &op : llvm::reverse(body)) {
    if (im.options.keepGradients)
      for (mlir::Value r : op.getResults())
        if (auto it = grads.find(r); it != grads.end())
          im.keptGrads[r] = it->second;
    if (auto err = im.backwardOp(op, grads))
      return err;
  }
  std::reverse(im.paramGrads.begin(), im.paramGrads.end());
  return llvm::Error::success();
}

llvm::Error SpmdInterpreter::Impl::backwardOp(
    mlir::Operation &op,
    llvm::DenseMap<mlir::Value, std::vector<Tensor>> &grads) {
  using llvm::Error;
  auto addGrad = [&](mlir::Value v, std::vector<Tensor> g) {
    if (!needsGrad.contains(v) || g.empty())
      return;
    accumulate(grads[v], std::move(g));
  };
  if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op)) {
    if (!needsGrad.contains(p.getResult()))
      return Error::success();
    std::vector<Tensor> g;
    auto it = grads.find(p.getResult());
    if (it != grads.end())
      g = std::move(it->second);
    else
      for (unsigned x = 0; x < geo.numDevices(); ++x)
        g.push_back(Tensor::zeros(values[p.getResult()].shard(x).getShape()));
    return syncParameter(p, std::move(g));
  }
  if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
    bool anyGrad = llvm::any_of(local.getResults(),
                                [&](mlir::Value r) { return grads.count(r); });
    bool anyNeeds = llvm::any_of(local.getOperands(), [&](mlir::Value v) {
      return needsGrad.contains(v);
    });
    if (!anyGrad || !anyNeeds)
      return Error::success();
    LocalStep &step = *steps[local];
    llvm::SmallVector<const DistValue *, 4> operands, results;
    llvm::SmallVector<mlir::Value, 4> outerOperands;
    for (mlir::Value v : step.inner->getOperands()) {
      mlir::Value outer =
          local.getOperand(v.cast<mlir::BlockArgument>().getArgNumber());
      outerOperands.push_back(outer);
      operands.push_back(&values[outer]);
    }
    llvm::SmallVector<const std::vector<Tensor> *, 2> resultGrads;
    for (mlir::Value r : local.getResults()) {
      results.push_back(&values[r]);
      auto it = grads.find(r);
      resultGrads.push_back(it == grads.end() ? nullptr : &it->second);
    }
    llvm::SmallVector<std::vector<Tensor>, 4> operandGrads;
    if (auto err = runLocalBackward(step, geo, operands, results, resultGrads,
                                    options.seed, operandGrads))
      return err;
    for (mlir::Value r : local.getResults())
      grads.erase(r);
    for (auto [j, pair] :
         llvm::enumerate(llvm::zip(outerOperands, operandGrads))) {
      auto &[v, g] = pair;
      keepContribution(local, j, v, g);
      addGrad(v, std::move(g));
    }
    return Error::success();
  }
  if (auto send = llvm::dyn_cast<spmd::SendOp>(op)) {
    // The gradient travels back from the receiver (recv → send).
    std::deque<DistValue> &from = staged ? gradientInbox : sentBack;
    if (from.empty())
      return Error::success();
    DistValue g = std::move(from.back());
    from.pop_back();
    if (staged) {
      // Already in the send's layout (PipelineCheck.cpp).
      keepContribution(send, 0, send.getInput(), g.shards);
      addGrad(send.getInput(), std::move(g.shards));
      return Error::success();
    }
    std::vector<Tensor> back =
        relayout(g, send.getInput(), values[send.getInput()].dist,
                 (1u << geo.numAxes()) - 1, Exchange::Copy);
    keepContribution(send, 0, send.getInput(), back);
    addGrad(send.getInput(), std::move(back));
    return Error::success();
  }
  if (auto recv = llvm::dyn_cast<spmd::RecvOp>(op)) {
    auto it = grads.find(recv.getResult());
    if (it == grads.end())
      return Error::success();
    sentBack.push_front(DistValue{recv.getDist(), std::move(it->second)});
    grads.erase(it);
    return Error::success();
  }
  // A collective: its dual from the table.
  if (op.getNumOperands() != 1 || op.getNumResults() != 1)
    return Error::success();
  mlir::Value in = op.getOperand(0), out = op.getResult(0);
  auto it = grads.find(out);
  if (it == grads.end() || !needsGrad.contains(in))
    return Error::success();
  std::optional<spmd::CollectiveDual> dual = lookupDual(options.duals, &op);
  std::vector<Tensor> g = std::move(it->second);
  grads.erase(it);
  if (!dual)
    return badInput("{0}: no dual for this op", describeOp(&op));
  auto axisAttr = op.getAttrOfType<mlir::IntegerAttr>("axis");
  unsigned axis = axisAttr ? unsigned(axisAttr.getInt()) : 0;
  Exchange how;
  switch (dual->backward) {
  case spmd::Collective::None:
    return Error::success();
  case spmd::Collective::ZeroPad:
    how = Exchange::Own;
    break;
  case spmd::Collective::AllGather:
  case spmd::Collective::AllToAll:
  case spmd::Collective::Send:
  case spmd::Collective::Recv:
    how = Exchange::Copy;
    break;
  case spmd::Collective::ReduceScatter:
  case spmd::Collective::AllReduce:
    how = Exchange::Add;
    break;
  }
  DistValue gv{values[out].dist, std::move(g)};
  // The gradient of a partial value is whole on its partial axes; the
  // relayout back targets the operand's layout with partial entries read
  // as whole.
  DistAttr to = values[in].dist;
  if (auto err =
          checkReachable(&op, gv.dist, in, to, 1u << axis, how, "backward"))
    return err;
  std::vector<Tensor> back = relayout(gv, in, to, 1u << axis, how);
  keepContribution(&op, 0, in, back);
  addGrad(in, std::move(back));
  return Error::success();
}

llvm::Error SpmdInterpreter::Impl::syncParameter(spmd::ParameterOp p,
                                                 std::vector<Tensor> grads) {
  const spmd::StrategyDual &dual = spmd::dualOf(p.getStrategy());
  if (!dual.trainable)
    return llvm::Error::success();
  DistAttr dist = p.getDist();
  spmd::MeshAxes idAxes = ShardGeometry::identityAxes(dist);
  ParameterGradient pg;
  pg.name = p.getName().str();
  pg.dist = dist;
  pg.strategy = spmd::toString(p.getStrategy()).str();
  if (dual.gradientSync != spmd::Collective::None) {
    // Sum over each group along the id axes (the members hold the same
    // box), in place: once per group, then copied to the other members.
    std::vector<bool> done(geo.numDevices(), false);
    for (unsigned x = 0; x < geo.numDevices(); ++x) {
      if (done[x])
        continue;
      llvm::SmallVector<unsigned, 8> group = geo.groupAlong(x, idAxes);
      Tensor &sum = grads[group[0]];
      for (unsigned y : llvm::drop_begin(group)) {
        float *o = sum.floats();
        const float *in = grads[y].floats();
        for (int64_t i = 0, e = sum.getNumElements(); i < e; ++i)
          o[i] += in[i];
      }
      for (unsigned y : llvm::drop_begin(group))
        std::copy_n(sum.floats(), sum.getNumElements(), grads[y].floats());
      for (unsigned y : group)
        done[y] = true;
    }
  }
  pg.shards = std::move(grads);
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    int64_t n = pg.shards[x].getNumElements();
    if (dual.gradientSync == spmd::Collective::ReduceScatter) {
      int64_t k = geo.sizeOf(idAxes), r = geo.rankInGroup(x, idAxes);
      pg.ranges.push_back({n * r / k, n * (r + 1) / k});
    } else {
      pg.ranges.push_back({0, n});
    }
  }
  paramGrads.push_back(std::move(pg));
  return llvm::Error::success();
}
