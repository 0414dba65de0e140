//===- PlanRun.cpp - weft-run --plan: verify an spmd plan -----------------===//

#include "PlanRun.h"
#include "ModelLoader.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Spmd/ShardGeometry.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace weft;
using namespace weft::exec;

llvm::Expected<unsigned> weft::planDevices(mlir::ModuleOp plan) {
  auto geo = spmd::ShardGeometry::get(plan);
  if (!geo)
    return geo.takeError();
  return geo->numDevices();
}

llvm::Expected<DualLookup> weft::overriddenDuals(llvm::StringRef spec) {
  auto [opName, collective] = spec.split('=');
  std::optional<spmd::Collective> replacement;
  for (spmd::Collective c :
       {spmd::Collective::None, spmd::Collective::ZeroPad,
        spmd::Collective::AllGather, spmd::Collective::ReduceScatter,
        spmd::Collective::AllReduce, spmd::Collective::AllToAll,
        spmd::Collective::Send, spmd::Collective::Recv})
    if (spmd::toString(c) == collective)
      replacement = c;
  if (opName.empty() || !replacement)
    return badInput("--test-dual-override '{0}': expected OP=COLLECTIVE", spec);
  std::string name = opName.str();
  spmd::Collective c = *replacement;
  return DualLookup([name, c](mlir::Operation *op) {
    std::optional<spmd::CollectiveDual> row = spmd::dualOf(op);
    if (row && op->getName().getStringRef() == name)
      row->backward = c;
    return row;
  });
}

int weft::runPlanCheck(llvm::StringRef modelName, llvm::StringRef planPath,
                       mlir::ModuleOp graph, mlir::ModuleOp plan,
                       const PlanCheckOptions &options, bool perParameter) {
  const char *tool = "weft-run";
  auto result = checkPlan(graph, plan, options);
  if (!result)
    return reportError(tool, result.takeError());
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("model:       {0}\n",
                      llvm::sys::path::filename(modelName));
  os << llvm::formatv("plan:        {0} ({1} virtual devices)\n", planPath,
                      result->numDevices);
  if (!result->pipelineOrder.empty())
    os << llvm::formatv("pipeline:    {0}\n", result->pipelineOrder);
  os << "loss:        " << llvm::format("%.7g", result->referenceLoss)
     << " (single device)\n";
  if (!result->agree && result->mismatch &&
      result->mismatch->tensor == "shapes")
    return reportError(tool, makeError(ExitVerifyFailed,
                                       "the plan differs from the model: {0}",
                                       result->mismatch->op));
  os << "spmd loss:   " << llvm::format("%.7g", result->spmdLoss) << "\n";
  os << llvm::formatv("difference:  loss {0:e2}, gradients max {1:e2}{2} "
                      "({3} parameters; rtol {4:e1}, atol {5:e1})\n",
                      result->lossDifference, result->maxGradientDifference,
                      result->worstParameter.empty()
                          ? std::string()
                          : " at '" + result->worstParameter + "'",
                      result->numParameters, options.rtol, options.atol);
  if (result->tiesResolved)
    os << llvm::formatv("ties:        {0} input element(s) of {1} piecewise "
                        "op(s) within the tolerance of a kink took the "
                        "plan's side\n",
                        result->tiesResolved, result->tieOps);
  if (perParameter)
    for (const auto &[name, diff] : result->gradientDifferences)
      os << llvm::formatv("grad diff:   {0} {1:e2}\n", name, diff);
  os << llvm::formatv("time:        reference {0}, spmd {1} (forward + "
                      "backward, wall, one thread)\n",
                      formatSeconds(result->referenceSeconds),
                      formatSeconds(result->spmdSeconds));
  if (result->agree) {
    os << "verdict:     the plan computes the model\n";
    return ExitSuccess;
  }
  const PlanMismatch &m = *result->mismatch;
  if (m.tensor == "shapes")
    return reportError(tool,
                       makeError(ExitVerifyFailed,
                                 "the plan differs from the model: {0}", m.op));
  return reportError(
      tool, makeError(ExitVerifyFailed,
                      "the plan differs from the model: first at {0}, {1}, "
                      "device {2}, element {3}: spmd {4:e6}, reference {5:e6}",
                      m.op, m.tensor, m.device, m.element, m.got, m.want));
}
