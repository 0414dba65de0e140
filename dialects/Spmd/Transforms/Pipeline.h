//===- Pipeline.h - spmd-synthesis-pipeline ----------------------*- C++
//-*-===//
//
// Registers `spmd-synthesis-pipeline` (Pipeline.cpp) for weft-opt.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_TRANSFORMS_PIPELINE_H
#define WEFT_SPMD_TRANSFORMS_PIPELINE_H

namespace weft::spmd {
void registerSynthesisPipeline();
} // namespace weft::spmd

#endif // WEFT_SPMD_TRANSFORMS_PIPELINE_H
