//===- BaselineReport.h - weftc --baselines ------------------------*- C++
//-*-===//
//
// Builds the baselines as spmd plans, scores them with the evaluator and
// reports them beside the lower bound.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_BASELINEREPORT_H
#define WEFT_TOOLS_WEFTC_BASELINEREPORT_H

#include "weft/Baselines/Baselines.h"
#include "weft/Eval/Evaluator.h"
#include "weft/PlanFormat/PlanJSON.h"
#include <vector>

namespace weft {

struct BaselineRow {
  std::string name, strategy;
  PlanEstimate estimate;
  mlir::OwningOpRef<mlir::ModuleOp> plan;
  /// The lower bound of any plan, seconds.
  double boundSeconds = 0;
};

llvm::Expected<std::vector<BaselineRow>>
estimateBaselines(mlir::ModuleOp graph, const ClusterSpec &spec, DType dtype,
                  const ProfileDB *db, double trainingFlops);

/// One row per baseline and one for the bound, every figure with its unit.
void printBaselines(const std::vector<BaselineRow> &rows, llvm::StringRef dtype,
                    llvm::raw_ostream &os);

llvm::json::Value toJSON(const std::vector<BaselineRow> &rows);

/// Writes DIR/baselines/<name>/plan.mlir, plan.json, estimate.json and
/// torch/ (the program that runs it; `graph` names its inputs and weights);
/// `context` is completed with each baseline's name as the plan's source.
llvm::Error writeBaselinePlans(const std::vector<BaselineRow> &rows,
                               mlir::ModuleOp graph, llvm::StringRef outDir,
                               const ClusterSpec &spec,
                               const PlanContext &context);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_BASELINEREPORT_H
