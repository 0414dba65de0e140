//===- SynthTestUtil.h - Clusters, graphs, spaces and enumeration ---------===//

#ifndef WEFT_TEST_SYNTH_SYNTHTESTUTIL_H
#define WEFT_TEST_SYNTH_SYNTHTESTUTIL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Synth/SearchSpace.h"
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
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

/// `bucketBytes`: the gradient bucket size (EvalOptions' default when
/// absent; 0 prices one sync per tensor).
ParsedSpace parseSpace(mlir::MLIRContext &ctx, const std::string &text,
                       const ClusterSpec &spec, bool recompute = false,
                       std::optional<double> bucketBytes = std::nullopt);

/// A module taking %x : tensor<8x16xf32> with `params` and `body`, whose
/// loss is the sum of `last`.
std::string residualModule(const std::string &params, const std::string &body,
                           const std::string &last);

/// `blocks` identical residual MLP blocks.
std::string repeatedBlocks(unsigned blocks);

/// Exhaustive enumeration of every choice sequence with the space's own
/// transition function: the least cost of a plan that fits in memory.
struct BruteForce {
  SearchSpace &space;
  double best = std::numeric_limits<double>::infinity();
  uint64_t plans = 0;
  /// Enumerates positions up to here (the whole program by default).
  unsigned end = ~0u;

  /// Enumerates from position `p` in state `key`, having paid `g` and
  /// holding `memory`.
  void run(unsigned p, const StateKey &key, double g,
           const MemoryTally &memory);
  /// Enumerates the whole space: the least cost, infinity when no plan fits.
  double solve();
};

} // namespace weft::synth::test

#endif // WEFT_TEST_SYNTH_SYNTHTESTUTIL_H
