//===- CellEstimator.h - Cell estimates from the synthesizer ------*- C++
//-*-===//
//
// Estimates Cells of one model on one cluster (docs/Cells.md):
// - full mode: synthesize() on the Cell's sub-cluster with its default
//   budget, the plan scored by the evaluator with gradient-sync overlap (as
//   weftc writes it); gradient accumulation (2, 4, 8 micro-batches) when
//   no plan fits memory at the whole batch;
// - fast mode: the first Cell of the model is synthesised in full; every
//   later Cell prices its search space once (ratios proportional to speed)
//   and takes the cheapest of the seed plans and of the plans of earlier
//   Cells replayed on it (a shared memo of choice sequences), improved
//   locally within a small budget; the search's step cost is scaled by the
//   ratio full / fast measured on the first Cell.
// Answers are memoised by (model fingerprint, devices, stages, batch), so a
// Cell asked again costs nothing. estimateAll() visits Cells in order of
// their lower bound and, with pruning, skips those whose bound exceeds the
// best Cell found.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CELL_CELLESTIMATOR_H
#define WEFT_CELL_CELLESTIMATOR_H

#include "weft/Cell/Cell.h"
#include "weft/Cell/ModelSource.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include <map>
#include <vector>

namespace weft {
namespace cell {

struct CellOptions {
  /// Fast mode (false: every Cell synthesised in full).
  bool fast = true;
  EvalOptions eval;
  /// Largest gradient-accumulation micro-batch count tried when no plan
  /// fits memory (powers of two from 2).
  unsigned maxMicroBatches = 8;
  /// Fast mode: transitions of the local improvement of each Cell's best
  /// candidate (0: none).
  uint64_t improveSteps = 20000;
  /// Fast mode: choice sequences kept in the memo (the most recent).
  unsigned memoPlans = 8;
  /// Fast mode: build the chosen plan and score it with the evaluator
  /// (gradient-sync overlap), as full synthesis does (false: the search's
  /// cost scaled by the calibration).
  bool evaluate = true;
  /// Fast mode, with `evaluate` on a Cell of several device classes: one
  /// ratio LP and the collective choice on the built plan before scoring
  /// it (one round of synthesize()'s alternation, no search after it).
  bool ratioLP = true;
  /// Fast mode: sequential LP rounds of that ratio LP.
  unsigned lpRounds = 8;
  /// Fast mode: run the seed plans only while the memo holds fewer than
  /// this many plans, or when none of its plans fits the Cell (the
  /// default: always; fewer costs accuracy, docs/Cells.md).
  unsigned seedsBelow = ~0u;
  /// Fast mode: the data-parallel seed alone (dataParallelSeed), not every
  /// seed plan (seedPlans).
  bool oneSeed = true;
  /// Fast mode, with `ratioLP`: the per-collective choice after the LP.
  bool selectCollectives = true;
};

/// Counters of an estimator's work.
struct CellStats {
  unsigned fullSyntheses = 0, fastEstimates = 0, memoHits = 0, pruned = 0;
  /// Cells of S > 1 stages synthesised (always in full).
  unsigned pipelineSyntheses = 0;
  /// Candidate plans replayed from the memo, and how often the best
  /// candidate of a fast estimate was a replayed one.
  unsigned replays = 0, replayWins = 0;
  double fullSeconds = 0, fastSeconds = 0;
  /// Fast mode's CPU seconds by phase: building the search spaces, the
  /// seed plans, replaying the memo, the local improvement.
  double buildCpu = 0, seedCpu = 0, replayCpu = 0, improveCpu = 0;
  /// Building the plan with the ratio LP and collective choice, and
  /// scoring it.
  double ratioCpu = 0, evalCpu = 0;
  /// Fast Cells handed to full synthesis (memory too tight for the fast
  /// mode's candidates).
  unsigned fallbacks = 0;
};

class CellEstimator {
public:
  CellEstimator(ModelGraphs &model, const ClusterSpec &cluster,
                const CellOptions &options);
  ~CellEstimator();

  /// The estimate of `cell`. An infeasible Cell is an estimate with
  /// `feasible` false and its reason; errors are bad input (devices the
  /// cluster lacks) or internal.
  llvm::Expected<CellEstimate> estimate(const Cell &cell);

  /// Estimates of `cells` in the order given. With `prune`, Cells are
  /// visited in ascending lower bound and a Cell whose bound exceeds the
  /// fastest feasible iteration found so far is not estimated (source
  /// Pruned).
  llvm::Expected<std::vector<CellEstimate>>
  estimateAll(llvm::ArrayRef<Cell> cells, bool prune);

  /// training FLOPs / Σ peak FLOP/s of the Cell's devices.
  double lowerBound(const Cell &cell) const;

  const CellStats &stats() const { return counters; }
  /// full / fast on the model's first Cell (1 before it).
  double calibration() const { return scale; }

private:
  struct Memo;
  llvm::Expected<CellEstimate> compute(const Cell &cell);
  llvm::Expected<CellEstimate> full(const Cell &cell, const ClusterSpec &sub);
  /// S > 1: pipeline synthesis (weft/Synth/PipelineSynth.h) in full.
  llvm::Expected<CellEstimate> pipelined(const Cell &cell,
                                         const ClusterSpec &sub);
  llvm::Expected<CellEstimate> fast(const Cell &cell, const ClusterSpec &sub);
  /// Per class of `sub`, the share of a split dimension each device takes:
  /// in proportion to the device type's speed on this model (1 / its
  /// single-device compute time), not its peak FLOP/s.
  std::vector<double> speedRatios(const ClusterSpec &sub, mlir::ModuleOp graph);
  /// The fast mode's raw step time (search cost × m) and memory of `cell`
  /// at `m` micro-batches; infeasible with a reason when nothing fits.
  llvm::Expected<CellEstimate> fastAt(const Cell &cell, const ClusterSpec &sub,
                                      unsigned m);

  ModelGraphs &model;
  const ClusterSpec &cluster;
  CellOptions options;
  std::unique_ptr<Memo> memo;
  std::map<Cell, CellEstimate> answers;
  /// Single-device compute seconds of the model by device type.
  std::map<std::string, double> computeOf;
  CellStats counters;
  double scale = 1;
  bool calibrated = false;
};

/// Every Cell of up to `maxStages` stages on `cluster`: per device type the
/// counts 1, 2, 4, ... up to what the cluster has (and that count itself),
/// homogeneous and, with `mixed`, every combination of two or more types;
/// stage counts 1..maxStages where the Cell has at least that many devices.
/// Ordered by total devices, then devices, then stages.
std::vector<Cell> enumerateCells(const ClusterSpec &cluster, unsigned maxStages,
                                 bool mixed);

} // namespace cell
} // namespace weft

#endif // WEFT_CELL_CELLESTIMATOR_H
