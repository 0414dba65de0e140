//===- PassSupport.cpp - Cluster and evaluator options of the passes ------===//

#include "PassSupport.h"
#include "weft/Support/Error.h"
#include <cmath>

using namespace weft;

llvm::Expected<ClusterSpec>
weft::spmd::loadPassCluster(llvm::StringRef clusterPath, llvm::StringRef dtype,
                            EvalOptions &options) {
  if (clusterPath.empty())
    return badInput("the pass needs the cluster: cluster=<path to spec yaml>");
  std::optional<DType> parsed = parseDType(dtype);
  if (!parsed)
    return badInput("unknown dtype '{0}' (fp32 | bf16 | fp16)", dtype.str());
  options.dtype = *parsed;
  return loadClusterSpec(clusterPath);
}

void weft::spmd::emitPassError(mlir::ModuleOp module, llvm::StringRef pass,
                               llvm::Error err) {
  module.emitError() << pass << ": " << llvm::toString(std::move(err));
}

double weft::spmd::stepSeconds(mlir::ModuleOp module, const ClusterSpec &spec,
                               const EvalOptions &options) {
  auto estimate = evaluatePlan(module, spec, options);
  if (!estimate) {
    llvm::consumeError(estimate.takeError());
    return std::nan("");
  }
  return estimate->stepSeconds;
}
