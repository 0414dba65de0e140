//===- Timeline.h - The estimated step as an SVG picture ----------*- C++
//-*-===//
//
// `weft-translate --spmd-to-timeline` and weftc's DIR/timeline.svg: one
// lane per device (more than 8 devices: per group of alike devices, plus
// the slowest) over a time axis in ms, a colour per event kind with a
// legend, idle as the lane's background, and per-lane memory bars against
// capacity. docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EMIT_TIMELINE_H
#define WEFT_EMIT_TIMELINE_H

#include "weft/Emit/StepPicture.h"
#include "llvm/Support/raw_ostream.h"

namespace weft {

/// Writes the picture as an SVG 1.1 document.
void writeTimelineSVG(const StepPicture &picture, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_EMIT_TIMELINE_H
