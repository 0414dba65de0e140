//===- SynthRatios.h - Search ratios, ratios under memory ---*- C++ -*-===//
//
// The search prices one ratio per device class; the ratio LP gives one per
// (segment, class). These turn the LP's ratios into the search's, and choose
// ratios under memory when no plan fits at ratios proportional to speed
// (docs/Synthesis.md "Ratios under memory").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_SYNTHRATIOS_H
#define WEFT_LIB_SYNTH_SYNTHRATIOS_H

#include "weft/Ratio/RatioProblem.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"

namespace weft::synth {

/// Per-class ratios for a search from per-segment ratios: the mean over the
/// segments weighted by `weights` (empty: equal weights), scaled to sum to 1
/// over the devices. Empty when there are no segments.
std::vector<double> classRatiosOf(const ratio::Ratios &rows,
                                  const ClusterSpec &spec,
                                  llvm::ArrayRef<double> weights = {});

/// Of the seed plans ignoring memory, the one whose fullest device is least
/// over its capacity, with that device's need over capacity; none when no
/// seed exists.
std::optional<std::pair<SearchOutcome, double>> nearestSeed(SearchSpace &space);

/// Ratios chosen under memory, for when no plan fits at ratios ∝ speed: the
/// seed plan nearest to fitting at speed ratios is built, and the ratio LP
/// with its memory rows (docs/Design.md §5) moves work off the devices short of
/// memory. The search prices memory a little differently from the built plan
/// (docs/Synthesis.md "The plan"), so the seeds are checked at the LP's
/// ratios, and a class they still overflow gets its LP capacity lowered by
/// that factor, a few times at most. The LP's error, naming the device class
/// that lacks memory and by how much, when no ratios fit. `atSpeed`: the
/// space at speed ratios (with `recompute`) when the caller has it; null:
/// built here.
llvm::Expected<std::vector<double>>
memoryRatios(mlir::ModuleOp graph, const ClusterSpec &spec,
             const SynthOptions &options, bool recompute,
             SearchSpace *atSpeed = nullptr);

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_SYNTHRATIOS_H
