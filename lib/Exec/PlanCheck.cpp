//===- PlanCheck.cpp - Verify an spmd plan against its model --------------===//
//
// The plan runs first (forward), then the reference with ties at kinks
// resolved to the plan's side (KinkTies.h), then both backward passes; the
// loss and every parameter gradient are compared. PlanMatch.cpp checks
// that the plan is of the model, PlanLocate.cpp finds where a wrong plan
// first differs.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/PlanCheck.h"
#include "Graph/IR/GraphOps.h"
#include "KinkTies.h"
#include "OpUtils.h"
#include "PipelineCheck.h"
#include "PlanLocate.h"
#include "PlanMatch.h"
#include "weft/Exec/Inputs.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/SpmdInterpreter.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Spmd/ProgramBuilder.h"
#include "weft/Support/Error.h"
#include <chrono>
#include <cmath>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The reference's operand adjuster: at a piecewise op, the plan's whole
/// operand values (from the op's spmd.local) settle the ties.
GraphInterpreter::OperandAdjuster tieResolver(const PlanMatcher &matcher,
                                              const SpmdInterpreter &spmd,
                                              const PlanCheckOptions &opts,
                                              PlanCheckResult &result) {
  return [&matcher, &spmd, &opts,
          &result](mlir::Operation &op, llvm::ArrayRef<const Tensor *> operands,
                   llvm::SmallVectorImpl<Tensor> &replacement) {
    if (!hasKinks(op))
      return false;
    auto local = llvm::dyn_cast_or_null<spmd::LocalOp>(matcher.localOf(&op));
    if (!local || matcher.graphOpOf(local) != &op)
      return false;
    llvm::SmallVector<Tensor, 2> whole(op.getNumOperands());
    llvm::SmallVector<const Tensor *, 2> plan(op.getNumOperands(), nullptr);
    for (mlir::OpOperand &in :
         local.getBody().front().front().getOpOperands()) {
      auto arg = in.get().dyn_cast<mlir::BlockArgument>();
      unsigned i = in.getOperandNumber();
      if (!arg || i >= whole.size() || !operands[i] || !operands[i]->isFloat())
        continue;
      const DistValue *dv = spmd.lookup(local.getOperand(arg.getArgNumber()));
      if (!dv)
        continue;
      whole[i] = wholeOf(spmd.geometry(), *dv, operands[i]->getShape());
      plan[i] = &whole[i];
    }
    int64_t taken = resolveTies(
        op, operands, plan, TieTolerance{opts.rtol, opts.atol}, replacement);
    if (!taken)
      return false;
    result.tiesResolved += taken;
    ++result.tieOps;
    return true;
  };
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
  if (spmd::isPipelined(plan))
    return checkPipeline(*graphMain, plan, opts);
  auto planMain = plan.lookupSymbol<mlir::func::FuncOp>("main");
  if (!planMain || planMain.isExternal())
    return badInput("the plan has no func.func @main");
  PlanMatcher matcher(*graphMain, planMain);
  if (auto err = matcher.match())
    return std::move(err);

  PlanCheckResult result;
  InitOptions init;
  init.seed = opts.seed;
  for (auto &f : opts.npyFiles)
    init.npyFiles[f.getKey()] = f.getValue();
  auto bindings = makeBindings(*graphMain, init);
  if (!bindings)
    return bindings.takeError();

  // The plan's forward pass first: the reference settles ties at kinks
  // with its values.
  SpmdRunOptions runOpts;
  runOpts.seed = opts.seed;
  runOpts.duals = opts.duals;
  for (unsigned i = 0; i < graphMain->getNumArguments(); ++i)
    runOpts.inputNames.push_back(inputName(*graphMain, i));
  auto spmd = SpmdInterpreter::create(plan, runOpts);
  if (!spmd)
    return spmd.takeError();
  result.numDevices = (*spmd)->geometry().numDevices();
  auto start = std::chrono::steady_clock::now();
  llvm::Error spmdForward = (*spmd)->forward(*bindings);
  result.spmdSeconds = secondsSince(start);

  // Reference.
  start = std::chrono::steady_clock::now();
  GraphInterpreter ref(*graphMain, opts.seed);
  if (opts.resolveTies && !spmdForward)
    ref.setOperandAdjuster(tieResolver(matcher, **spmd, opts, result));
  if (auto err = ref.forward(*bindings)) {
    llvm::consumeError(std::move(spmdForward));
    return std::move(err);
  }
  if (auto err = ref.backward()) {
    llvm::consumeError(std::move(spmdForward));
    return std::move(err);
  }
  result.referenceSeconds = secondsSince(start);
  result.referenceLoss = ref.getLoss();

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
  if (spmdForward)
    return asMismatch(std::move(spmdForward));
  start = std::chrono::steady_clock::now();
  if (auto err = (*spmd)->backward())
    return asMismatch(std::move(err));
  result.spmdSeconds += secondsSince(start);
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
      Diff d =
          compareTensors(*got, *piece, opts.rtol, opts.atol, 0, begin, end);
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
      // what every op's backward adds, and find the first op whose own
      // backward differs.
      runOpts.keepGradients = true;
      auto again = SpmdInterpreter::create(plan, runOpts);
      auto refBackward = referenceBackward(*graphMain, ref);
      if (again && refBackward) {
        llvm::Error err = (*again)->forward(*bindings);
        if (!err)
          err = (*again)->backward();
        if (!err)
          result.mismatch = firstBackwardMismatch(planMain, matcher,
                                                  *refBackward, **again, opts);
        llvm::consumeError(std::move(err));
      }
      if (!again)
        llvm::consumeError(again.takeError());
      if (!refBackward)
        llvm::consumeError(refBackward.takeError());
    }
    if (!result.mismatch)
      result.mismatch = gradMismatch;
  }
  return result;
}
