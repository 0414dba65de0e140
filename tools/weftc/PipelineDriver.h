//===- PipelineDriver.h - weftc --stages: pipelined plans ----------*- C++
//-*-===//
//
// weftc -o DIR --stages N|auto (docs/Pipeline.md "Synthesis"): runs
// synthesizePipeline (weft/Synth/PipelineSynth.h), compares its plan with
// the baselines like a single-stage plan, prints the stages (--explain:
// cut points, device groups, M, bubble) and writes plan.mlir, plan.json
// and the step pictures.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_PIPELINEDRIVER_H
#define WEFT_TOOLS_WEFTC_PIPELINEDRIVER_H

#include "SynthDriver.h"
#include "weft/Synth/PipelineSynth.h"

namespace weft {

/// The stage count of --stages: 0 for auto. Errors (exit 1): not auto and
/// not a positive count.
llvm::Expected<unsigned> parseStagesFlag(llvm::StringRef flag);

/// Synthesises a pipelined plan (or, from auto, a single-stage one) and
/// writes it to `outDir`. `inputs.graph` is the whole-batch program.
llvm::Error pipelineAndWrite(const SynthFlags &flags, const SynthInputs &in,
                             unsigned stages,
                             const GraphAtMicroBatches &graphAt,
                             int64_t globalBatch, llvm::StringRef outDir,
                             llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_PIPELINEDRIVER_H
