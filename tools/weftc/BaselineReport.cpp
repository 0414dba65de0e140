//===- BaselineReport.cpp - weftc --baselines -----------------------------===//

#include "BaselineReport.h"
#include "PlanOutput.h"
#include "weft/Cost/LowerBound.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace weft;

llvm::Expected<std::vector<BaselineRow>>
weft::estimateBaselines(mlir::ModuleOp graph, const ClusterSpec &spec,
                        DType dtype, const ProfileDB *db,
                        double trainingFlops) {
  std::vector<BaselineRow> rows;
  // Evaluated as every plan weftc shows is: with gradient-sync overlap
  // (the synthesised plan and plan.json use the same figures).
  EvalOptions options;
  options.dtype = dtype;
  options.profile = db;
  options.overlapGradientSync = true;
  double bound = lowerBoundSeconds(trainingFlops, spec, dtype);
  for (BaselineKind kind : allBaselines()) {
    auto built = buildBaseline(kind, graph, spec, dtype);
    if (!built)
      return built.takeError();
    auto estimate = evaluatePlan(*built->plan, spec, options);
    if (!estimate)
      return estimate.takeError();
    rows.push_back({baselineName(kind).str(), built->strategy,
                    std::move(*estimate), std::move(built->plan), bound});
  }
  return rows;
}

void weft::printBaselines(const std::vector<BaselineRow> &rows,
                          llvm::StringRef dtype, llvm::raw_ostream &os) {
  if (rows.empty())
    return;
  os << llvm::formatv("baselines ({0}, Adam; every figure an estimate, "
                      "docs/Evaluator.md):\n",
                      dtype);
  os << llvm::formatv("  {0,-6} {1,12} {2,-24} {3,11} {4,9}  {5}\n", "name",
                      "step time", "peak memory/device", "comm share",
                      "vs bound", "strategy");
  for (const BaselineRow &r : rows) {
    const PlanEstimate &e = r.estimate;
    std::string memory =
        llvm::formatv("{0:F2} GB ({1})", e.peakMemoryBytes / 1e9,
                      e.fits ? "fits" : "does not fit");
    os << llvm::formatv("  {0,-6} {1,9:F2} ms {2,-24} {3,9:F1} % {4,8:F2}x  "
                        "{5} (estimate)\n",
                        r.name, e.stepSeconds * 1e3, memory, e.commShare * 100,
                        ratioToLowerBound(e.stepSeconds, r.boundSeconds),
                        r.strategy);
  }
  os << llvm::formatv("  {0,-6} {1,9:F2} ms {2,-24} {3,11} {4,8:F2}x  "
                      "training FLOPs / peak FLOP/s (estimate)\n",
                      "bound", rows.front().boundSeconds * 1e3, "-", "-", 1.0);
}

llvm::json::Value weft::toJSON(const std::vector<BaselineRow> &rows) {
  llvm::json::Array out;
  for (const BaselineRow &r : rows) {
    llvm::json::Value e = toJSON(r.estimate);
    llvm::json::Object row{
        {"name", r.name},
        {"strategy", r.strategy},
        {"ratio_to_bound",
         ratioToLowerBound(r.estimate.stepSeconds, r.boundSeconds)}};
    // The per-device and per-step detail goes to estimate.json with -o.
    for (llvm::StringRef key :
         {"estimate", "step_time_s", "compute_s", "comm_s", "optimizer_s",
          "comm_share", "peak_memory_bytes", "fits"})
      row[key] = *e.getAsObject()->get(key);
    out.push_back(std::move(row));
  }
  if (!rows.empty())
    out.push_back(llvm::json::Object{{"name", "bound"},
                                     {"estimate", true},
                                     {"step_time_s", rows.front().boundSeconds},
                                     {"ratio_to_bound", 1.0}});
  return out;
}

llvm::Error weft::writeBaselinePlans(const std::vector<BaselineRow> &rows,
                                     mlir::ModuleOp graph,
                                     llvm::StringRef outDir,
                                     const ClusterSpec &spec,
                                     const PlanContext &context) {
  for (const BaselineRow &r : rows) {
    llvm::SmallString<128> dir(outDir);
    llvm::sys::path::append(dir, "baselines", r.name);
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return badInput("cannot create '{0}': {1}", dir.str().str(),
                      ec.message());
    PlanContext own = context;
    own.source = r.name;
    if (auto err = writePlanFiles(dir, r.plan.get(), spec, r.estimate, own))
      return err;
    if (auto err = writeRunnableFiles(dir, r.plan.get(), graph,
                                      llvm::sys::path::filename(context.model)))
      return err;
    llvm::SmallString<128> estimate(dir);
    llvm::sys::path::append(estimate, "estimate.json");
    if (auto err = writeFile(estimate, [&](llvm::raw_ostream &os) {
          os << llvm::formatv("{0:2}", toJSON(r.estimate)) << "\n";
        }))
      return err;
  }
  return llvm::Error::success();
}
