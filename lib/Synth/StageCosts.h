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
// optimizer state plus its kept activations times the in-flight
// micro-batches (times `activationShare`: recomputation lowers it) fit the
// group's memory less the reserve. Estimates that steer the choice; the
// evaluator prices the plan built.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_STAGECOSTS_H
#define WEFT_LIB_SYNTH_STAGECOSTS_H

#include "StageProgram.h"
#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "weft/Synth/StageCuts.h"

namespace weft::synth {

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

  /// Program position of boundary i (0 and the program's size at the ends).
  unsigned position(unsigned i) const { return boundaries[i]; }
  /// The cluster node at node boundary i.
  unsigned node(unsigned i) const { return nodeBounds[i]; }
  /// Bytes the stage [a, b) needs with `inFlight` micro-batches, and the
  /// bytes nodes [u, v) offer.
  double neededBytes(unsigned a, unsigned b, int64_t inFlight) const;
  double capacityBytes(unsigned u, unsigned v) const;

  /// Share of the kept activations counted in memory (1: none recomputed).
  double activationShare = 1;

private:
  const ClusterSpec &spec;
  std::vector<unsigned> boundaries, nodeBounds;
  /// [type][position]: Σ of the ops' forward + backward on one device.
  std::vector<std::vector<double>> prefixSeconds;
  /// [position]: Σ kept activation bytes; Σ parameter bytes with their
  /// gradients and optimizer state (each parameter at its first reader).
  std::vector<double> prefixKept, prefixState;
  /// [type][node]: devices of the type in nodes [0, node).
  std::vector<std::vector<unsigned>> prefixDevices;
  /// [node]: usable bytes of nodes [0, node).
  std::vector<double> prefixCapacity;
  /// [boundary]: the link's seconds (0 at the ends).
  std::vector<double> links;
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_STAGECOSTS_H
