//===- VariantChooser.h - Baselines pick rule variants greedily ---*- C++
//-*-===//
//
// The baselines fix the layout of the inputs and of the parameters; every
// other op gets, per mesh axis and in axis order, the sharding-rule variant
// (docs/ShardingRules.md) whose preconditions its operands reach most
// cheaply from where they are: fewest bytes moved (all-reduce and
// reduce-scatter count twice, so partial sums are added up whole, Megatron
// style), then fewest relayout steps, then fewest split results (a whole
// value stays whole), then the rule table's order. The plan itself is built
// by weft::spmd::buildProgram.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_BASELINES_VARIANTCHOOSER_H
#define WEFT_LIB_BASELINES_VARIANTCHOOSER_H

#include "weft/Spmd/ProgramBuilder.h"

namespace weft::baselines {

/// A chooser for buildProgram; `freshRatios[a]` are the per-class ratios of
/// a new split on axis a (one nobody's operand has yet).
spmd::OpChooser greedyChooser(std::vector<std::vector<double>> freshRatios);

} // namespace weft::baselines

#endif // WEFT_LIB_BASELINES_VARIANTCHOOSER_H
