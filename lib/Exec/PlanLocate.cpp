//===- PlanLocate.cpp - Where a plan first differs from its model ---------===//

#include "PlanLocate.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdKernels.h"
#include <cmath>
#include <deque>
#include <limits>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

Diff weft::exec::compareTensors(const Tensor &a, const Tensor &b, double rtol,
                                double atol, double slack, int64_t begin,
                                int64_t end) {
  Diff d;
  if (end < 0)
    end = a.getNumElements();
  for (int64_t i = begin; i < end; ++i) {
    double x = a.at(i), y = b.at(i);
    double diff = std::fabs(x - y);
    if (std::isnan(x) != std::isnan(y))
      diff = std::numeric_limits<double>::infinity();
    else if (std::isnan(x))
      diff = 0;
    d.maxAbs = std::max(d.maxAbs, diff);
    if (d.first < 0 && diff > atol + rtol * std::fabs(y) + slack) {
      d.first = i;
      d.got = x;
      d.want = y;
    }
  }
  return d;
}

namespace {

double maxAbs(const Tensor &t) {
  double m = 0;
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    m = std::max(m, std::fabs(t.at(i)));
  return m;
}

bool isFloat(mlir::Value v) {
  return v.getType()
      .cast<mlir::RankedTensorType>()
      .getElementType()
      .isa<mlir::FloatType>();
}

/// acc += t (acc invalid: a copy of t).
void addInto(Tensor &acc, const Tensor &t) {
  if (!acc.isValid()) {
    acc = t;
    return;
  }
  for (int64_t i = 0; i < acc.getNumElements(); ++i)
    acc.floats()[i] += t.floats()[i];
}

/// "graph.relu ("relu1") [relu.split, relu.replicate]" for a local, the op
/// itself otherwise.
std::string describePlanOp(mlir::Operation *op, const PlanMatcher &matcher) {
  if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
    mlir::Operation *inner = matcher.graphOpOf(local);
    return (inner ? describeOp(inner) : describeOp(op)) + " [" +
           local.getVariant().str() + "]";
  }
  if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op))
    return "spmd.parameter '" + p.getName().str() + "'";
  return describeOp(op);
}

/// "result 0 of graph.conv2d ("conv1")", "result 0 of spmd.all_reduce of
/// graph.conv2d ("conv1")", "input 'x'".
std::string describeValue(mlir::Value v, const PlanMatcher &matcher) {
  if (auto arg = v.dyn_cast<mlir::BlockArgument>())
    return "input " + std::to_string(arg.getArgNumber());
  auto res = v.cast<mlir::OpResult>();
  mlir::Operation *def = res.getOwner();
  std::string what;
  if (auto local = llvm::dyn_cast<spmd::LocalOp>(def)) {
    mlir::Operation *inner = matcher.graphOpOf(local);
    what = inner ? describeOp(inner) : describeOp(def);
  } else {
    what = describePlanOp(def, matcher);
  }
  std::string s =
      "result " + std::to_string(res.getResultNumber()) + " of " + what;
  // A collective's result: name the value it is a copy of.
  if (!llvm::isa<spmd::LocalOp, spmd::ParameterOp>(def) &&
      def->getNumOperands() == 1) {
    mlir::Value root = def->getOperand(0);
    while (mlir::Operation *d = root.getDefiningOp()) {
      if (llvm::isa<spmd::LocalOp, spmd::ParameterOp>(d) ||
          d->getNumOperands() != 1)
        break;
      root = d->getOperand(0);
    }
    if (mlir::Operation *d = root.getDefiningOp())
      s += " of " + (llvm::isa<spmd::LocalOp>(d) && matcher.graphOpOf(d)
                         ? describeOp(matcher.graphOpOf(d))
                         : describePlanOp(d, matcher));
  }
  return s;
}

/// The op inside an spmd.local's region (its operands are the region's
/// arguments, numbered as the graph op's operands).
mlir::Operation *regionOp(spmd::LocalOp local) {
  for (mlir::Operation &o : local.getBody().front())
    if (!llvm::isa<spmd::YieldOp>(o))
      return &o;
  return nullptr;
}

/// The spmd.parameter a value is a copy of (through collectives), if any.
spmd::ParameterOp rootParameter(mlir::Value v) {
  while (mlir::Operation *d = v.getDefiningOp()) {
    if (auto p = llvm::dyn_cast<spmd::ParameterOp>(d))
      return p;
    if (llvm::isa<spmd::LocalOp>(d) || d->getNumOperands() != 1)
      return {};
    v = d->getOperand(0);
  }
  return {};
}

} // namespace

std::optional<PlanMismatch> weft::exec::firstForwardMismatch(
    mlir::func::FuncOp planMain, const PlanMatcher &matcher,
    const GraphInterpreter &ref, const SpmdInterpreter &spmd,
    const PlanCheckOptions &opts) {
  const ShardGeometry &geo = spmd.geometry();
  for (mlir::Operation &op : planMain.getBody().front()) {
    for (auto [r, value] : llvm::enumerate(op.getResults())) {
      mlir::Value gv = matcher.graphValueOf(value);
      const DistValue *dv = spmd.lookup(value);
      const Tensor *want = gv ? ref.lookup(gv) : nullptr;
      if (!dv || !want)
        continue;
      double slack = opts.rtol * 1e-2 * maxAbs(*want);
      for (unsigned x = 0; x < geo.numDevices(); ++x) {
        Tensor got = combinedShard(geo, *dv, x);
        Tensor piece =
            extractBox(*want, geo.shardBox(want->getShape(), dv->dist, x));
        if (got.getShape() != piece.getShape())
          return PlanMismatch{describeOp(&op),
                              "result " + std::to_string(r) + " (shape " +
                                  shapeString(got.getShape()) + ", expected " +
                                  shapeString(piece.getShape()) + ")",
                              x,
                              0,
                              0,
                              0};
        Diff d = compareTensors(got, piece, opts.rtol, opts.atol, slack);
        if (d.first >= 0)
          return PlanMismatch{describePlanOp(&op, matcher),
                              "result " + std::to_string(r),
                              x,
                              d.first,
                              d.got,
                              d.want};
      }
    }
  }
  return std::nullopt;
}

llvm::Expected<ReferenceBackward>
weft::exec::referenceBackward(mlir::func::FuncOp main,
                              const GraphInterpreter &ref) {
  ReferenceBackward out;
  auto &grads = out.grads;
  auto &needs = out.needs;
  mlir::Value loss;
  mlir::Block &body = main.getBody().front();
  for (mlir::Operation &op : body) {
    if (auto r = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      loss = r.getOperand(0);
      continue;
    }
    bool any = llvm::isa<g::ParameterOp>(op) ||
               llvm::any_of(op.getOperands(),
                            [&](mlir::Value v) { return needs.contains(v); });
    for (mlir::Value r : op.getResults())
      if (any && isFloat(r))
        needs.insert(r);
  }
  grads[loss] = Tensor::filled({}, 1.0f);
  llvm::SmallVector<Tensor> operandGrads;
  for (mlir::Operation &op : llvm::reverse(body)) {
    if (llvm::isa<mlir::func::ReturnOp, g::ParameterOp, g::BufferOp>(op))
      continue;
    bool anyGrad = llvm::any_of(op.getResults(),
                                [&](mlir::Value r) { return grads.count(r); });
    bool anyNeeds = llvm::any_of(
        op.getOperands(), [&](mlir::Value v) { return needs.contains(v); });
    if (!anyGrad || !anyNeeds)
      continue;
    if (auto err = ref.gradientsOf(op, grads, operandGrads))
      return std::move(err);
    for (auto [i, pair] :
         llvm::enumerate(llvm::zip(op.getOperands(), operandGrads))) {
      auto &[v, grad] = pair;
      if (!grad.isValid() || !needs.contains(v))
        continue;
      out.contributions[{&op, unsigned(i)}] = grad;
      addInto(grads[v], grad);
    }
  }
  return out;
}

std::optional<PlanMismatch> weft::exec::firstBackwardMismatch(
    mlir::func::FuncOp planMain, const PlanMatcher &matcher,
    const ReferenceBackward &ref, const SpmdInterpreter &spmd,
    const PlanCheckOptions &opts) {
  const ShardGeometry &geo = spmd.geometry();
  mlir::Block &body = planMain.getBody().front();
  // Values travel send → recv in order.
  llvm::DenseMap<mlir::Operation *, mlir::Value> recvOf;
  {
    std::deque<mlir::Operation *> inFlight;
    for (mlir::Operation &op : body) {
      if (llvm::isa<spmd::SendOp>(op))
        inFlight.push_back(&op);
      else if (llvm::isa<spmd::RecvOp>(op) && !inFlight.empty()) {
        recvOf[inFlight.front()] = op.getResult(0);
        inFlight.pop_front();
      }
    }
  }
  auto refContribution = [&](mlir::Operation *graphOp,
                             unsigned i) -> const Tensor * {
    auto it = ref.contributions.find({graphOp, i});
    return it == ref.contributions.end() ? nullptr : &it->second;
  };
  // What the reference adds to the gradient of plan value v through all of
  // its uses (a collective's result passes on what its own uses add).
  llvm::DenseMap<mlir::Value, Tensor> expected;
  std::function<const Tensor &(mlir::Value)> expectedOf =
      [&](mlir::Value v) -> const Tensor & {
    if (auto it = expected.find(v); it != expected.end())
      return it->second;
    Tensor sum;
    for (mlir::OpOperand &use : v.getUses()) {
      mlir::Operation *user = use.getOwner();
      if (auto local = llvm::dyn_cast<spmd::LocalOp>(user)) {
        mlir::Operation *inner = matcher.graphOpOf(local);
        mlir::Operation *clone = regionOp(local);
        if (!inner || !clone)
          continue;
        mlir::Block &region = local.getBody().front();
        for (mlir::OpOperand &in : clone->getOpOperands()) {
          auto arg = in.get().dyn_cast<mlir::BlockArgument>();
          if (arg && arg.getOwner() == &region &&
              arg.getArgNumber() == use.getOperandNumber())
            if (const Tensor *c = refContribution(inner, in.getOperandNumber()))
              addInto(sum, *c);
        }
      } else if (llvm::isa<mlir::func::ReturnOp>(user)) {
        addInto(sum, Tensor::filled({}, 1.0f));
      } else if (llvm::isa<spmd::SendOp>(user)) {
        if (mlir::Value r = recvOf.lookup(user))
          addInto(sum, expectedOf(r));
      } else if (user->getNumResults() == 1) {
        addInto(sum, expectedOf(user->getResult(0)));
      }
    }
    if (!sum.isValid())
      sum =
          Tensor::zeros(v.getType().cast<mlir::RankedTensorType>().getShape());
    return expected[v] = std::move(sum);
  };
  // Compares what `op` added to operand value v (per device) with `want`.
  auto check = [&](mlir::Operation &op, mlir::Value v,
                   const std::vector<Tensor> *got,
                   const Tensor &want) -> std::optional<PlanMismatch> {
    const DistValue *dv = spmd.lookup(v);
    if (!dv)
      return std::nullopt;
    double slack = opts.rtol * 1e-2 * maxAbs(want);
    spmd::MeshAxes idAxes = ShardGeometry::identityAxes(dv->dist);
    for (unsigned x = 0; x < geo.numDevices(); ++x) {
      spmd::ShardBox box = geo.shardBox(want.getShape(), dv->dist, x);
      Tensor piece = extractBox(want, box);
      Tensor sum = Tensor::zeros(box.extents);
      if (got)
        for (unsigned y : geo.groupAlong(x, idAxes))
          addInto(sum, (*got)[y]);
      Diff d = compareTensors(sum, piece, opts.rtol, opts.atol, slack);
      if (d.first < 0)
        continue;
      std::string tensor = "gradient of " + describeValue(v, matcher);
      spmd::ParameterOp p = rootParameter(v);
      mlir::Value leaf = p ? matcher.graphValueOf(p.getResult()) : nullptr;
      if (p && p.getStrategy() == spmd::ParamStrategy::Buffer && leaf &&
          llvm::isa<g::ParameterOp>(leaf.getDefiningOp()))
        return PlanMismatch{"spmd.parameter '" + p.getName().str() +
                                "' (strategy buffer: not trained)",
                            "gradient of result 0 of spmd.parameter '" +
                                p.getName().str() + "'",
                            x,
                            d.first,
                            d.got,
                            d.want};
      return PlanMismatch{"the backward of " + describePlanOp(&op, matcher),
                          tensor,
                          x,
                          d.first,
                          d.got,
                          d.want};
    }
    return std::nullopt;
  };
  for (mlir::Operation &op : llvm::reverse(body)) {
    if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
      mlir::Operation *inner = matcher.graphOpOf(local);
      mlir::Operation *clone = regionOp(local);
      if (!inner || !clone)
        continue;
      for (mlir::OpOperand &in : clone->getOpOperands()) {
        auto arg = in.get().dyn_cast<mlir::BlockArgument>();
        if (!arg)
          continue;
        mlir::Value v = local.getOperand(arg.getArgNumber());
        mlir::Value gv = matcher.graphValueOf(v);
        if (!gv || !ref.needs.contains(gv))
          continue;
        unsigned i = in.getOperandNumber();
        const Tensor *want = refContribution(inner, i);
        Tensor zeros;
        if (!want) {
          zeros = Tensor::zeros(
              v.getType().cast<mlir::RankedTensorType>().getShape());
          want = &zeros;
        }
        if (auto m = check(op, v, spmd.lookupContribution(&op, i), *want))
          return m;
      }
      continue;
    }
    if (llvm::isa<spmd::ParameterOp, spmd::RecvOp, mlir::func::ReturnOp>(op) ||
        op.getNumOperands() != 1)
      continue;
    // A collective or a send: it passes on what its result's uses added.
    mlir::Value v = op.getOperand(0);
    mlir::Value gv = matcher.graphValueOf(v);
    if (!gv || !ref.needs.contains(gv))
      continue;
    mlir::Value out = llvm::isa<spmd::SendOp>(op) ? recvOf.lookup(&op)
                      : op.getNumResults() == 1   ? op.getResult(0)
                                                  : mlir::Value();
    if (!out)
      continue;
    if (auto m = check(op, v, spmd.lookupContribution(&op, 0), expectedOf(out)))
      return m;
  }
  return std::nullopt;
}
