//===- PlanCheck.cpp - Verify an spmd plan against its model --------------===//

#include "weft/Exec/PlanCheck.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "weft/Exec/Inputs.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdInterpreter.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Spmd/ProgramBuilder.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"
#include <chrono>
#include <cmath>
#include <deque>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string typeString(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// Maps every value of the plan's @main to the graph value it holds (a
/// distributed copy of), checking that the plan computes the model: the
/// k-th spmd.local holds the k-th non-leaf graph op (same op, attributes,
/// types, operands), parameters match by name and type, inputs by position.
class PlanMatcher {
public:
  PlanMatcher(mlir::func::FuncOp graphMain, mlir::func::FuncOp planMain)
      : graphMain(graphMain), planMain(planMain) {}

  llvm::Error match();
  mlir::Value graphValueOf(mlir::Value planValue) const {
    return toGraph.lookup(planValue);
  }
  /// The graph op whose result `planValue` holds (null for leaves).
  mlir::Operation *graphOpOf(mlir::Operation *planOp) const {
    return opToGraph.lookup(planOp);
  }

private:
  mlir::func::FuncOp graphMain, planMain;
  llvm::DenseMap<mlir::Value, mlir::Value> toGraph;
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> opToGraph;
};

llvm::Error PlanMatcher::match() {
  if (graphMain.getNumArguments() != planMain.getNumArguments())
    return badInput("the plan's @main has {0} inputs, the model {1}",
                    planMain.getNumArguments(), graphMain.getNumArguments());
  for (unsigned i = 0; i < graphMain.getNumArguments(); ++i) {
    mlir::Value a = graphMain.getArgument(i), b = planMain.getArgument(i);
    if (a.getType() != b.getType())
      return badInput("input {0} ('{1}') is {2} in the model but {3} in the "
                      "plan",
                      i, inputName(graphMain, i), typeString(a.getType()),
                      typeString(b.getType()));
    toGraph[b] = a;
  }
  // Leaves and compute ops of the model, in program order.
  llvm::StringMap<mlir::Value> leaves;
  std::vector<mlir::Operation *> compute;
  mlir::Value graphLoss;
  for (mlir::Operation &op : graphMain.getBody().front()) {
    if (auto p = llvm::dyn_cast<g::ParameterOp>(op))
      leaves.try_emplace(p.getName(), p.getResult());
    else if (auto b = llvm::dyn_cast<g::BufferOp>(op))
      leaves.try_emplace(b.getName(), b.getResult());
    else if (auto r = llvm::dyn_cast<mlir::func::ReturnOp>(op))
      graphLoss = r.getNumOperands() ? r.getOperand(0) : mlir::Value();
    else
      compute.push_back(&op);
  }
  llvm::StringSet<> seen;
  llvm::DenseSet<mlir::Operation *> usedConstants;
  std::deque<mlir::Value> inFlight;
  size_t k = 0;
  for (mlir::Operation &op : planMain.getBody().front()) {
    if (auto c = llvm::dyn_cast<g::ConstantOp>(op)) {
      // A replicated constant outside any local: the same constant of the
      // model (equal constants are interchangeable).
      mlir::Operation *match = nullptr;
      for (mlir::Operation *o : compute)
        if (llvm::isa<g::ConstantOp>(o) && !usedConstants.contains(o) &&
            o->getAttrDictionary() == c->getAttrDictionary() &&
            o->getResultTypes() == c->getResultTypes()) {
          match = o;
          break;
        }
      if (!match)
        return badInput("{0}: the model has no such constant", describeOp(c));
      usedConstants.insert(match);
      toGraph[c.getResult()] = match->getResult(0);
      continue;
    }
    if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op)) {
      auto it = leaves.find(p.getName());
      if (it == leaves.end())
        return badInput("spmd.parameter '{0}' is not a parameter or buffer "
                        "of the model",
                        p.getName());
      if (it->second.getType() != p.getType())
        return badInput("parameter '{0}' is {1} in the model but {2} in the "
                        "plan",
                        p.getName(), typeString(it->second.getType()),
                        typeString(p.getType()));
      toGraph[p.getResult()] = it->second;
      seen.insert(p.getName());
      continue;
    }
    if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
      mlir::Operation *inner = nullptr;
      for (mlir::Operation &o : local.getBody().front())
        if (!llvm::isa<spmd::YieldOp>(o) && !inner)
          inner = &o;
      // Constants the plan keeps outside locals are matched above.
      while (k < compute.size() && llvm::isa<g::ConstantOp>(compute[k]) &&
             !(inner && llvm::isa<g::ConstantOp>(inner)))
        ++k;
      if (k >= compute.size())
        return badInput("the plan has more compute ops than the model ({0}); "
                        "the extra one is {1}",
                        compute.size(),
                        inner ? describeOp(inner) : std::string("empty"));
      mlir::Operation *want = compute[k++];
      if (!inner || inner->getName() != want->getName())
        return badInput("op {0} of the model is {1}, the plan has {2}", k - 1,
                        describeOp(want),
                        inner ? describeOp(inner) : std::string("nothing"));
      if (inner->getAttrDictionary() != want->getAttrDictionary())
        return badInput("op {0} ({1}): the plan's attributes differ from the "
                        "model's",
                        k - 1, describeOp(want));
      if (inner->getNumOperands() != want->getNumOperands() ||
          inner->getNumResults() != want->getNumResults() ||
          local.getNumResults() != want->getNumResults())
        return badInput("op {0} ({1}): operand or result count differs", k - 1,
                        describeOp(want));
      for (auto [i, pair] : llvm::enumerate(
               llvm::zip(inner->getOperands(), want->getOperands()))) {
        auto [mine, theirs] = pair;
        if (mine.getType() != theirs.getType())
          return badInput("op {0} ({1}): operand {2} is {3} in the model but "
                          "{4} in the plan",
                          k - 1, describeOp(want), i,
                          typeString(theirs.getType()),
                          typeString(mine.getType()));
        auto arg = mine.dyn_cast<mlir::BlockArgument>();
        mlir::Value outer = arg && arg.getOwner() == &local.getBody().front()
                                ? local.getOperand(arg.getArgNumber())
                                : mlir::Value();
        if (!outer || toGraph.lookup(outer) != theirs)
          return badInput("op {0} ({1}): operand {2} is not the model's "
                          "operand",
                          k - 1, describeOp(want), i);
      }
      for (auto [i, pair] :
           llvm::enumerate(llvm::zip(local.getResults(), want->getResults()))) {
        auto [mine, theirs] = pair;
        if (mine.getType() != theirs.getType())
          return badInput("op {0} ({1}): result {2} is {3} in the model but "
                          "{4} in the plan",
                          k - 1, describeOp(want), i,
                          typeString(theirs.getType()),
                          typeString(mine.getType()));
        toGraph[mine] = theirs;
      }
      opToGraph[local] = want;
      continue;
    }
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1 ||
          toGraph.lookup(ret.getOperand(0)) != graphLoss)
        return badInput("the plan does not return the model's loss");
      continue;
    }
    if (auto send = llvm::dyn_cast<spmd::SendOp>(op)) {
      inFlight.push_back(toGraph.lookup(send.getInput()));
      continue;
    }
    if (auto recv = llvm::dyn_cast<spmd::RecvOp>(op)) {
      // Values arrive in the order they were sent.
      if (inFlight.empty())
        return badInput("{0}: nothing was sent before this recv",
                        describeOp(recv));
      toGraph[recv.getResult()] = inFlight.front();
      inFlight.pop_front();
      continue;
    }
    // A collective: the same value, laid out differently.
    if (op.getNumOperands() == 1 && op.getNumResults() == 1)
      toGraph[op.getResult(0)] = toGraph.lookup(op.getOperand(0));
  }
  while (k < compute.size() && llvm::isa<g::ConstantOp>(compute[k]) &&
         usedConstants.contains(compute[k]))
    ++k;
  if (k != compute.size())
    return badInput("the plan computes {0} ops of the model's {1}; the first "
                    "missing is {2}",
                    k, compute.size(), describeOp(compute[k]));
  for (auto &entry : leaves)
    if (!seen.contains(entry.getKey()) &&
        llvm::isa<g::ParameterOp>(entry.getValue().getDefiningOp()))
      return badInput("parameter '{0}' of the model is not in the plan",
                      entry.getKey());
  return llvm::Error::success();
}

/// max |a − b| and the first element with |a − b| > atol + rtol·|b| (+ the
/// extra tolerance `slack`), over the flat range [begin, end).
struct Diff {
  double maxAbs = 0;
  int64_t first = -1;
  double got = 0, want = 0;
};

Diff compare(const Tensor &a, const Tensor &b, double rtol, double atol,
             double slack = 0, int64_t begin = 0, int64_t end = -1) {
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

double maxAbs(const Tensor &t) {
  double m = 0;
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    m = std::max(m, std::fabs(t.at(i)));
  return m;
}

/// The first forward value of the plan that differs from the reference.
std::optional<PlanMismatch> firstForwardMismatch(mlir::func::FuncOp planMain,
                                                 const PlanMatcher &matcher,
                                                 const GraphInterpreter &ref,
                                                 const SpmdInterpreter &spmd,
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
        Diff d = compare(got, piece, opts.rtol, opts.atol, slack);
        if (d.first >= 0) {
          std::string what = describeOp(&op);
          if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
            mlir::Operation *inner = matcher.graphOpOf(local);
            what = (inner ? describeOp(inner) : what) + " [" +
                   local.getVariant().str() + "]";
          }
          return PlanMismatch{
              what, "result " + std::to_string(r), x, d.first, d.got, d.want};
        }
      }
    }
  }
  return std::nullopt;
}

/// Every value's gradient in the reference (reverse mode from d(loss) = 1
/// over the reference's last forward pass), keeping them all.
llvm::Expected<llvm::DenseMap<mlir::Value, Tensor>>
referenceGradients(mlir::func::FuncOp main, const GraphInterpreter &ref,
                   uint64_t seed) {
  llvm::DenseMap<mlir::Value, Tensor> grads;
  llvm::DenseSet<mlir::Value> needs;
  llvm::DenseMap<mlir::Operation *, uint64_t> dropoutIds;
  uint64_t next = 0;
  mlir::Value loss;
  mlir::Block &body = main.getBody().front();
  auto isFloat = [](mlir::Value v) {
    return v.getType()
        .cast<mlir::RankedTensorType>()
        .getElementType()
        .isa<mlir::FloatType>();
  };
  for (mlir::Operation &op : body) {
    if (llvm::isa<g::DropoutOp>(op))
      dropoutIds[&op] = next++;
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
  llvm::SmallVector<const Tensor *> operands, results, resultGrads;
  llvm::SmallVector<Tensor> zeros, operandGrads;
  for (mlir::Operation &op : llvm::reverse(body)) {
    if (llvm::isa<mlir::func::ReturnOp, g::ParameterOp, g::BufferOp>(op))
      continue;
    bool anyGrad = llvm::any_of(op.getResults(),
                                [&](mlir::Value r) { return grads.count(r); });
    bool anyNeeds = llvm::any_of(
        op.getOperands(), [&](mlir::Value v) { return needs.contains(v); });
    if (!anyGrad || !anyNeeds)
      continue;
    operands.clear();
    results.clear();
    resultGrads.clear();
    zeros.clear();
    zeros.reserve(op.getNumResults());
    for (mlir::Value v : op.getOperands())
      operands.push_back(ref.lookup(v));
    for (mlir::Value r : op.getResults()) {
      const Tensor *value = ref.lookup(r);
      results.push_back(value);
      auto it = grads.find(r);
      if (it != grads.end())
        resultGrads.push_back(&it->second);
      else if (value->isFloat())
        resultGrads.push_back(
            &zeros.emplace_back(Tensor::zeros(value->getShape())));
      else
        resultGrads.push_back(nullptr);
    }
    OpContext ctx;
    ctx.seed = seed;
    ctx.dropoutId = dropoutIds.lookup(&op);
    if (auto err = runOpBackward(&op, operands, results, resultGrads, ctx,
                                 operandGrads))
      return std::move(err);
    for (auto [v, grad] : llvm::zip(op.getOperands(), operandGrads)) {
      if (!grad.isValid() || !needs.contains(v))
        continue;
      auto [slot, fresh] = grads.try_emplace(v);
      if (fresh) {
        slot->second = std::move(grad);
        continue;
      }
      for (int64_t i = 0; i < grad.getNumElements(); ++i)
        slot->second.floats()[i] += grad.floats()[i];
    }
  }
  return grads;
}

/// The first value of the plan, in reverse program order, whose gradient
/// differs from the reference's (the values after it agree, so the backward
/// of one of its uses is wrong).
std::optional<PlanMismatch>
firstBackwardMismatch(mlir::func::FuncOp planMain, const PlanMatcher &matcher,
                      const llvm::DenseMap<mlir::Value, Tensor> &refGrads,
                      const SpmdInterpreter &spmd,
                      const PlanCheckOptions &opts) {
  const ShardGeometry &geo = spmd.geometry();
  for (mlir::Operation &op : llvm::reverse(planMain.getBody().front())) {
    for (auto [r, value] : llvm::enumerate(op.getResults())) {
      mlir::Value gv = matcher.graphValueOf(value);
      const DistValue *dv = spmd.lookup(value);
      auto refIt = gv ? refGrads.find(gv) : refGrads.end();
      if (!dv || refIt == refGrads.end())
        continue;
      const Tensor &want = refIt->second;
      const std::vector<Tensor> *got = spmd.lookupGradient(value);
      double slack = opts.rtol * 1e-2 * maxAbs(want);
      spmd::MeshAxes idAxes = ShardGeometry::identityAxes(dv->dist);
      for (unsigned x = 0; x < geo.numDevices(); ++x) {
        spmd::ShardBox box = geo.shardBox(want.getShape(), dv->dist, x);
        Tensor piece = extractBox(want, box);
        Tensor sum = Tensor::zeros(box.extents);
        if (got)
          for (unsigned y : geo.groupAlong(x, idAxes))
            for (int64_t i = 0; i < sum.getNumElements(); ++i)
              sum.floats()[i] += (*got)[y].floats()[i];
        Diff d = compare(sum, piece, opts.rtol, opts.atol, slack);
        if (d.first < 0)
          continue;
        std::string uses;
        for (mlir::Operation *user : value.getUsers()) {
          std::string name = user->getName().getStringRef().str();
          if (auto local = llvm::dyn_cast<spmd::LocalOp>(user))
            if (mlir::Operation *inner = matcher.graphOpOf(local))
              name = describeOp(inner);
          if (uses.find(name) == std::string::npos)
            uses += (uses.empty() ? "" : ", ") + name;
        }
        std::string what = describeOp(&op);
        if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op))
          what = "spmd.parameter '" + p.getName().str() + "'";
        else if (auto local = llvm::dyn_cast<spmd::LocalOp>(op))
          if (mlir::Operation *inner = matcher.graphOpOf(local))
            what = describeOp(inner);
        if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op))
          if (p.getStrategy() == "buffer")
            return PlanMismatch{what + " (strategy buffer: not trained)",
                                "gradient of result " + std::to_string(r) +
                                    " of " + what,
                                x,
                                d.first,
                                d.got,
                                d.want};
        return PlanMismatch{"the backward of " + uses,
                            "gradient of result " + std::to_string(r) + " of " +
                                what,
                            x,
                            d.first,
                            d.got,
                            d.want};
      }
    }
  }
  return std::nullopt;
}

} // namespace

llvm::Expected<PlanCheckResult>
weft::exec::checkPlan(mlir::ModuleOp graph, mlir::ModuleOp plan,
                      const PlanCheckOptions &opts) {
  if (auto fp = plan->getAttrOfType<mlir::StringAttr>(
          spmd::SpmdDialect::kFingerprintAttr)) {
    std::string mine = modelFingerprint(graph);
    if (fp.getValue() != mine)
      return badInput("the plan's fingerprint {0} is not the model's {1} "
                      "(another model, other batch flags, or --no-fuse given "
                      "to only one of weftc and weft-run)",
                      fp.getValue(), mine);
  }
  auto graphMain = findMain(graph);
  if (!graphMain)
    return graphMain.takeError();
  auto planMain = plan.lookupSymbol<mlir::func::FuncOp>("main");
  if (!planMain || planMain.isExternal())
    return badInput("the plan has no func.func @main");
  PlanMatcher matcher(*graphMain, planMain);
  if (auto err = matcher.match())
    return std::move(err);

  PlanCheckResult result;
  // Reference.
  InitOptions init;
  init.seed = opts.seed;
  for (auto &f : opts.npyFiles)
    init.npyFiles[f.getKey()] = f.getValue();
  auto bindings = makeBindings(*graphMain, init);
  if (!bindings)
    return bindings.takeError();
  auto start = std::chrono::steady_clock::now();
  GraphInterpreter ref(*graphMain, opts.seed);
  if (auto err = ref.forward(*bindings))
    return std::move(err);
  if (auto err = ref.backward())
    return std::move(err);
  result.referenceSeconds = secondsSince(start);
  result.referenceLoss = ref.getLoss();

  // SPMD.
  SpmdRunOptions runOpts;
  runOpts.seed = opts.seed;
  runOpts.duals = opts.duals;
  for (unsigned i = 0; i < graphMain->getNumArguments(); ++i)
    runOpts.inputNames.push_back(inputName(*graphMain, i));
  auto spmd = SpmdInterpreter::create(plan, runOpts);
  if (!spmd)
    return spmd.takeError();
  result.numDevices = (*spmd)->geometry().numDevices();
  start = std::chrono::steady_clock::now();
  // A recipe that cannot run on its shards is a verification failure.
  auto asMismatch = [&](llvm::Error err) -> llvm::Expected<PlanCheckResult> {
    std::optional<PlanMismatch> m;
    llvm::Error rest = llvm::handleErrors(
        std::move(err), [&](const WeftError &e) -> llvm::Error {
          if (e.getCode() != ExitVerifyFailed)
            return llvm::make_error<WeftError>(e.getCode(), e.getMessage());
          m = PlanMismatch{e.getMessage(), "shapes", 0, 0, 0, 0};
          return llvm::Error::success();
        });
    if (rest)
      return std::move(rest);
    result.agree = false;
    result.mismatch = m;
    return result;
  };
  if (auto err = (*spmd)->forward(*bindings))
    return asMismatch(std::move(err));
  if (auto err = (*spmd)->backward())
    return asMismatch(std::move(err));
  result.spmdSeconds = secondsSince(start);
  result.spmdLoss = (*spmd)->getLoss();

  // Loss.
  result.lossDifference = std::fabs(result.spmdLoss - result.referenceLoss);
  bool lossAgrees = result.lossDifference <=
                    opts.atol + opts.rtol * std::fabs(result.referenceLoss);
  if (std::isnan(result.spmdLoss) != std::isnan(result.referenceLoss))
    lossAgrees = false;

  // Parameter gradients.
  const ShardGeometry &geo = (*spmd)->geometry();
  std::optional<PlanMismatch> gradMismatch;
  llvm::StringMap<const ParameterGradient *> byName;
  for (const ParameterGradient &pg : (*spmd)->getParameterGradients())
    byName.try_emplace(pg.name, &pg);
  std::vector<std::string> names = ref.getParameterNames();
  result.numParameters = names.size();
  for (const std::string &name : names) {
    const Tensor &want = ref.getParameterGradients().find(name)->second;
    auto it = byName.find(name);
    double worst = 0;
    for (unsigned x = 0; x < geo.numDevices(); ++x) {
      Tensor zeros, cut;
      const Tensor *got = nullptr, *piece = &want;
      int64_t begin = 0, end = -1;
      if (it == byName.end()) {
        // Not trained in the plan: no gradient at all.
        zeros = Tensor::zeros(want.getShape());
        got = &zeros;
      } else {
        const ParameterGradient &pg = *it->second;
        got = &pg.shards[x];
        spmd::ShardBox box = geo.shardBox(want.getShape(), pg.dist, x);
        if (box.extents != llvm::ArrayRef<int64_t>(want.getShape())) {
          cut = extractBox(want, box);
          piece = &cut;
        }
        std::tie(begin, end) = pg.ranges[x];
      }
      Diff d = compare(*got, *piece, opts.rtol, opts.atol, 0, begin, end);
      worst = std::max(worst, d.maxAbs);
      if (d.maxAbs > result.maxGradientDifference) {
        result.maxGradientDifference = d.maxAbs;
        result.worstParameter = name;
      }
      if (d.first >= 0 && !gradMismatch)
        gradMismatch = PlanMismatch{
            it == byName.end()
                ? "spmd.parameter '" + name + "' (not trained)"
                : "spmd.parameter '" + name + "' (" + it->second->strategy +
                      ", gradient after the backward pass)",
            "gradient of parameter '" + name + "'",
            x,
            d.first,
            d.got,
            d.want};
      if (it == byName.end())
        break;
    }
    result.gradientDifferences.emplace_back(name, worst);
  }
  result.agree = lossAgrees && !gradMismatch;
  if (!result.agree) {
    result.mismatch =
        firstForwardMismatch(planMain, matcher, ref, **spmd, opts);
    if (!result.mismatch && !lossAgrees)
      result.mismatch = PlanMismatch{
          "loss", "loss", 0, 0, result.spmdLoss, result.referenceLoss};
    if (!result.mismatch) {
      // The forward agrees: run the plan again keeping every gradient and
      // find the first that differs in backward order.
      runOpts.keepGradients = true;
      auto again = SpmdInterpreter::create(plan, runOpts);
      auto refGrads = referenceGradients(*graphMain, ref, opts.seed);
      if (again && refGrads) {
        llvm::Error err = (*again)->forward(*bindings);
        if (!err)
          err = (*again)->backward();
        if (!err)
          result.mismatch = firstBackwardMismatch(planMain, matcher, *refGrads,
                                                  **again, opts);
        llvm::consumeError(std::move(err));
      }
      if (!again)
        llvm::consumeError(again.takeError());
      if (!refGrads)
        llvm::consumeError(refGrads.takeError());
    }
    if (!result.mismatch)
      result.mismatch = gradMismatch;
  }
  return result;
}
