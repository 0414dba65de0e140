//===- StageCosts.h - Estimated stage times of a graph program (lib/Synth)
//-*- C++ -*-===//
//
// The table chooseStages() reads for a real program (docs/Pipeline.md
// "Synthesis"): boundaries are the program's cut points (coarsened to at
// most `maxCuts` stages' worth, evenly by compute), a stage's time is its
// ops' forward and backward at the micro-batch on its devices working in
// proportion to their speed (Σ 1 / t_device inverted: perfect data
// parallelism), a link's time its crossing bytes both ways over the
// slowest NIC, and a stage fits when its parameters with gradients and
// optimizer state (sharded over the group) plus its kept activations
// times the in-flight micro-batches (in proportion to each device's speed;
// times `activationShare`) fit kMemoryHeadroom of every device's memory
// less the reserve; a stage that does not fit may recompute (checkpoints
// at its cut points, one block live; the forward twice). Estimates that steer
// the choice; the evaluator prices the plan built.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_STAGECOSTS_H
#define WEFT_LIB_SYNTH_STAGECOSTS_H

#include "StageProgram.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Synth/StageCuts.h"

namespace weft::synth {

/// Share of a group's usable memory a stage may fill in the cut table:
/// what the table leaves out (transient buffers, uneven shards, ZeRO-3
/// gathers, the loss's buffers) needs the rest. A heuristic.
constexpr double kMemoryHeadroom = 0.8;
/// Least samples of a micro-batch per device of a group: uneven ratios
/// between device classes need more than one sample per device to split
/// the batch by speed. A heuristic.
constexpr int64_t kSamplesPerDevice = 4;

class ProgramStageCosts : public StageCostModel {
public:
  ProgramStageCosts(const StageProgram &program, const ClusterSpec &spec,
                    const EvalOptions &eval, unsigned maxCuts = 48,
                    unsigned maxNodeGroups = 64);

  unsigned numCuts() const override { return boundaries.size() - 1; }
  /// Node boundaries: every node, or on clusters of more than
  /// maxNodeGroups nodes every ⌈nodes / maxNodeGroups⌉-th (DP time).
  unsigned numNodes() const override { return nodeBounds.size() - 1; }
  double stageSeconds(unsigned a, unsigned b, unsigned u,
                      unsigned v) const override;
  double linkSeconds(unsigned cut) const override { return links[cut]; }
  bool fits(unsigned a, unsigned b, unsigned u, unsigned v,
            int64_t inFlight) const override;
  /// Recomputing: the forward runs twice; kept are the checkpoints (the
  /// values crossing each cut point inside the stage, per in-flight
  /// micro-batch) and one block's activations at a time.
  double recomputedSeconds(unsigned a, unsigned b, unsigned u, unsigned v,
                           int64_t inFlight) const override;

  /// Program position of boundary i (0 and the program's size at the ends).
  unsigned position(unsigned i) const { return boundaries[i]; }
  /// The cluster node at node boundary i.
  unsigned node(unsigned i) const { return nodeBounds[i]; }
  /// Bytes the stage [a, b) needs with `inFlight` micro-batches (kept
  /// activations, or recomputing), and the bytes nodes [u, v) offer.
  double neededBytes(unsigned a, unsigned b, int64_t inFlight,
                     bool recompute = false) const;
  double capacityBytes(unsigned u, unsigned v) const;
  /// One device's share of the parameter state of boundaries [a, b) on
  /// nodes [u, v), sharded over all of them (its least).
  double stateShare(unsigned a, unsigned b, unsigned u, unsigned v) const;

  /// Kept activations (or checkpoints) are counted times this (the
  /// micro-batch relative to the table's).
  double activationShare = 1;
  /// Share of a device's usable memory a stage may fill.
  double memoryHeadroom = kMemoryHeadroom;
  /// Every stage's nodes of one device type (no mixed groups).
  bool oneTypePerStage = false;
  /// Samples of a micro-batch (0: no limit): a group has at most
  /// 1 / samplesPerDevice as many devices, so that data parallelism
  /// splits the micro-batch by speed.
  int64_t samples = 0;
  int64_t samplesPerDevice = kSamplesPerDevice;

private:
  const ClusterSpec &spec;
  std::vector<unsigned> boundaries, nodeBounds;
  /// Seconds of boundaries [a, b) on nodes [u, v) with the forward run
  /// `forwards` times.
  double secondsOf(unsigned a, unsigned b, unsigned u, unsigned v,
                   double forwards) const;
  /// [type][position]: Σ of the ops' forward + backward, and of their
  /// forward, on one device.
  std::vector<std::vector<double>> prefixSeconds, prefixForward;
  /// [position]: Σ of the bytes crossing the cut points before it.
  std::vector<double> prefixCheckpoints;
  /// [a * (numCuts() + 1) + b]: the most kept bytes of one block (between
  /// consecutive cut points) inside boundaries [a, b).
  std::vector<double> largestBlock;
  /// [position]: Σ kept activation bytes; Σ parameter bytes with their
  /// gradients and optimizer state (each parameter at its first reader).
  std::vector<double> prefixKept, prefixState;
  /// [type][node]: devices of the type in nodes [0, node).
  std::vector<std::vector<unsigned>> prefixDevices;
  /// Devices of nodes [u, v).
  unsigned devicesOf(unsigned u, unsigned v) const;
  /// Per device type: one device's share of boundaries [a, b)'s work on
  /// nodes [u, v) at speed ratios (0 for types not there).
  std::vector<double> speedShares(unsigned a, unsigned b, unsigned u,
                                  unsigned v) const;
  /// Nodes [u, v) hold devices of more than one type.
  bool mixed(unsigned u, unsigned v) const;
  /// Whether every device of nodes [u, v) holds its share: the stage's
  /// parameter state over all of them, its activations in proportion to
  /// device speed, within kMemoryHeadroom of its usable memory.
  bool fitsDevices(unsigned a, unsigned b, unsigned u, unsigned v,
                   int64_t inFlight, bool recompute) const;
  /// [node]: usable bytes of nodes [0, node); [type]: of one device.
  std::vector<double> prefixCapacity, usable;
  /// [boundary]: the link's seconds (0 at the ends).
  std::vector<double> links;
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_STAGECOSTS_H
