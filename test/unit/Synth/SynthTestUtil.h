//===- SynthTestUtil.h - Clusters, random graphs and spaces for tests -----===//

#ifndef WEFT_TEST_SYNTH_SYNTHTESTUTIL_H
#define WEFT_TEST_SYNTH_SYNTHTESTUTIL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Synth/SearchSpace.h"
#include <memory>
#include <random>
#include <string>

namespace weft::synth::test {

/// `nodes` nodes of `devices` devices; node i is Fast when i is even, Slow
/// otherwise (kToyCluster's types), `memoryGB` each; Slow nodes' devices are
/// linked at `slowIntraGBs` GB/s when given (50 otherwise, as Fast ones).
ClusterSpec cluster(unsigned nodes, unsigned devices, double memoryGB = 16,
                    double slowIntraGBs = 0);

/// A random chain: matmuls by parameters, bias adds, relus and residual
/// adds over a [B, D] activation, ending in a reduce_sum.
std::string randomGraph(std::mt19937 &rng, unsigned ops);

/// A program parsed into `ctx` with its search space on `spec` (the space
/// points into the module, so both are kept); `error` says why not.
struct ParsedSpace {
  mlir::OwningOpRef<mlir::ModuleOp> graph;
  std::unique_ptr<SearchSpace> space;
  std::string error;
};

ParsedSpace parseSpace(mlir::MLIRContext &ctx, const std::string &text,
                       const ClusterSpec &spec, bool recompute = false);

} // namespace weft::synth::test

#endif // WEFT_TEST_SYNTH_SYNTHTESTUTIL_H
