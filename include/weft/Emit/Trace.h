//===- Trace.h - The estimated step as a Chrome trace -------------*- C++
//-*-===//
//
// `weft-translate --spmd-to-trace` and weftc's DIR/trace.json: the events
// of the timeline (Timeline.h) in Chrome's trace-event format (JSON object
// form), so an estimate opens in Perfetto or chrome://tracing beside a
// measured profile. docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EMIT_TRACE_H
#define WEFT_EMIT_TRACE_H

#include "weft/Emit/StepPicture.h"
#include "llvm/Support/raw_ostream.h"

namespace weft {

/// Writes {"traceEvents": [...], "displayTimeUnit": "ms", "otherData":
/// {...}}, one event per line.
void writeTraceJSON(const StepPicture &picture, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_EMIT_TRACE_H
