//===- Accumulation.h - Micro-batch counts weftc tries ------------*- C++
//-*-===//
//
// Gradient accumulation (docs/Synthesis.md "Gradient accumulation"): when
// no plan fits memory at the whole batch, weftc synthesises one micro-batch
// of the step and runs it several times before one optimizer step.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_ACCUMULATION_H
#define WEFT_TOOLS_WEFTC_ACCUMULATION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <vector>

namespace weft {

/// The micro-batch counts to try, in order, for `--micro-batches flag`:
/// - "N": {N}; N must divide `batch` and leave at least one sample per
///   device, and N > 1 needs a symbolic batch dim (`batchSymbolic`);
/// - "auto": 1, then 2, 4, 8, ... while those hold (only 1 when the batch
///   is not symbolic).
/// Errors: bad input (exit 1) naming the flag.
llvm::Expected<std::vector<int64_t>> microBatchCounts(llvm::StringRef flag,
                                                      int64_t batch,
                                                      unsigned devices,
                                                      bool batchSymbolic);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_ACCUMULATION_H
