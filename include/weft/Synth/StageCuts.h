//===- StageCuts.h - Cut points and device groups of pipeline stages -*- C++
//-*-===//
//
// The dynamic program of pipelined synthesis (docs/Pipeline.md
// "Synthesis"): given a table of candidate stages — a range of cut points
// [a, b) on a contiguous range of nodes [u, v) — with an estimated time per
// micro-batch, the transfer at each cut and whether the stage fits memory
// with its in-flight micro-batches (or, slower, when it recomputes its
// activations), choose S stages covering every cut range and every node
// that minimise the pipeline's
//   Σ_s t_s + Σ links + (M − 1) · max(t_s, links).
// Plain code: the table is an interface, tested on synthetic tables.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SYNTH_STAGECUTS_H
#define WEFT_SYNTH_STAGECUTS_H

#include <cstdint>
#include <optional>
#include <vector>

namespace weft::synth {

/// Candidate stages: boundaries 0..numCuts() of the program (0 its start,
/// numCuts() its end) and nodes 0..numNodes() (contiguous groups).
class StageCostModel {
public:
  virtual ~StageCostModel();
  virtual unsigned numCuts() const = 0;
  virtual unsigned numNodes() const = 0;
  /// One micro-batch's forward and backward of boundaries [a, b) on nodes
  /// [u, v), seconds.
  virtual double stageSeconds(unsigned a, unsigned b, unsigned u,
                              unsigned v) const = 0;
  /// The activations forward and their gradients back at boundary `cut`
  /// (0 < cut < numCuts()), per micro-batch, seconds.
  virtual double linkSeconds(unsigned cut) const = 0;
  /// Whether boundaries [a, b) on nodes [u, v) fit memory while keeping
  /// `inFlight` micro-batches of activations.
  virtual bool fits(unsigned a, unsigned b, unsigned u, unsigned v,
                    int64_t inFlight) const = 0;
  /// The time of a stage that does not fit as it is but fits recomputing
  /// its activations (keeping only checkpoints); infinity when it does not
  /// fit either way. By default: no recomputation.
  virtual double recomputedSeconds(unsigned a, unsigned b, unsigned u,
                                   unsigned v, int64_t inFlight) const;
};

/// S stages: stage s is boundaries [cuts[s], cuts[s+1]) on nodes
/// [nodes[s], nodes[s+1]).
struct StagePartition {
  std::vector<unsigned> cuts, nodes;
  /// Per stage t_s, and per link between s and s + 1.
  std::vector<double> stageSeconds, linkSeconds;
  /// Per stage: it fits only recomputing its activations.
  std::vector<bool> recompute;
  /// max over stages and links, and their sum.
  double slowest = 0, fill = 0;
  /// fill + (M − 1) · slowest.
  double pipelineSeconds(int64_t microBatches) const {
    return fill + double(microBatches - 1) * slowest;
  }
};

/// In-flight micro-batches of stage `s` of `stages` under 1F1B.
int64_t inFlightMicroBatches(unsigned s, unsigned stages, int64_t microBatches);

/// The partition into `stages` stages with the least pipeline time at
/// `microBatches` among those whose every stage fits (1F1B in-flight
/// counts); none when stages exceed the cuts or the nodes or nothing fits.
/// The minimum is taken over a ladder of bounds on the slowest stage (each
/// bound's least fill, exactly), so it is exact up to that ladder's step
/// (docs/Pipeline.md).
std::optional<StagePartition> chooseStages(const StageCostModel &model,
                                           unsigned stages,
                                           int64_t microBatches);

} // namespace weft::synth

#endif // WEFT_SYNTH_STAGECUTS_H
