//===- RandomPlanOutput.cpp - weftc --random-plan -------------------------===//

#include "RandomPlanOutput.h"
#include "PlanOutput.h"
#include "Spmd/IR/SpmdOps.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Spmd/RandomPlan.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace weft;

llvm::Error weft::writeRandomPlan(uint64_t seed, mlir::ModuleOp graph,
                                  const ClusterSpec &spec, EvalOptions eval,
                                  PlanContext context, llvm::StringRef outDir,
                                  llvm::raw_ostream &os) {
  // The mesh of the baselines: the cluster's devices, one class per device
  // class, read back from the DP-EV plan built on it.
  auto dp = buildBaseline(BaselineKind::DPEven, graph, spec, eval.dtype);
  if (!dp)
    return dp.takeError();
  auto mesh = dp->plan->getOperation()->getAttrOfType<spmd::MeshAttr>(
      spmd::SpmdDialect::kMeshAttr);
  if (!mesh)
    return makeError(ExitInternal, "the DP-EV plan carries no mesh");
  auto random = spmd::randomPlan(graph, mesh, seed);
  if (!random)
    return makeError(ExitInternal, "random plan {0}: {1}", seed,
                     llvm::toString(random.takeError()));
  eval.overlapGradientSync = true;
  auto estimate = evaluatePlan(*random->plan, spec, eval);
  if (!estimate)
    return estimate.takeError();
  context.source = llvm::formatv("random-{0}", seed).str();
  if (auto err =
          writePlanFiles(outDir, *random->plan, spec, *estimate, context))
    return err;
  if (auto err = writeRunnableFiles(outDir, *random->plan, graph,
                                    llvm::sys::path::filename(context.model)))
    return err;
  os << llvm::formatv("random plan {0}:      {1:F3} ms per step (estimate)\n"
                      "wrote:               {2}/plan.mlir, {2}/plan.json, "
                      "{2}/torch/, {2}/launch/\n",
                      seed, estimate->stepSeconds * 1e3, outDir);
  return llvm::Error::success();
}
