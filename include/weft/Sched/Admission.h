//===- Admission.h - Deadline-aware admission --------------------*- C++
//-*-===//
//
// `--deadlines`: a job with a deadline is admitted only if some Cell (GPU type
// and count) finishes it in time given the work already admitted: a fluid
// estimate where the GPU-seconds queued on a type drain at its capacity.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_ADMISSION_H
#define WEFT_SCHED_ADMISSION_H

#include "weft/Sched/RateModel.h"
#include "llvm/ADT/ArrayRef.h"
#include <string>

namespace weft {
namespace sched {

/// Estimated finish time of `job` (needing `remainingSteps`) arriving at
/// `nowS`, over every Cell; `backlogGpuS[t]` are GPU-seconds already queued
/// on type t, `capacity[t]` its healthy GPUs. Infinity if no Cell fits.
double estimateFinish(const RateModel &rates, unsigned job,
                      double remainingSteps, double nowS,
                      llvm::ArrayRef<double> backlogGpuS,
                      llvm::ArrayRef<unsigned> capacity, unsigned onlyCount);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_ADMISSION_H
