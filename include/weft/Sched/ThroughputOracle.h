//===- ThroughputOracle.h - How fast a job runs on a set of GPUs -*- C++
//-*-===//
//
// The scheduler's only source of performance numbers. Implementations: the
// table oracle (Gavel's measured throughput JSON) and the compiler (Cells,
// include/weft/Cell/CompilerOracle.h, outside this MLIR-free library). GPU
// types are named as the oracle knows them ("v100", ...); RateModel maps
// cluster types onto them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_THROUGHPUTORACLE_H
#define WEFT_SCHED_THROUGHPUTORACLE_H

#include "llvm/ADT/StringRef.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weft {
namespace sched {

/// Per-iteration compute and communication of one job placement, for the
/// network model.
struct IterationProfile {
  /// Seconds of computation per iteration (no communication).
  double computeS = 0;
  /// Bytes each GPU sends per iteration across nodes when spread.
  double bytesPerGpu = 0;
};

/// Throughput of a job of a given type on `count` GPUs of one type.
class ThroughputOracle {
public:
  virtual ~ThroughputOracle();

  /// Iterations per second of `jobType` run with `count` GPUs of `gpuType`,
  /// all in as few nodes as possible (`consolidated`) or spread over nodes.
  /// Returns 0 when the placement is infeasible (e.g. out of memory) and
  /// std::nullopt when the oracle has no figure for it.
  virtual std::optional<double> throughput(llvm::StringRef jobType,
                                           unsigned count,
                                           llvm::StringRef gpuType,
                                           bool consolidated) const = 0;

  /// Iterations per second of `jobType` on a heterogeneous Cell: `counts`
  /// GPUs of each oracle GPU type, all one job (one plan over them, as the
  /// compiler oracle prices it; not HadarE's copies). Returns 0 when
  /// infeasible and std::nullopt when the oracle cannot tell (the default,
  /// and the table oracle's answer).
  virtual std::optional<double>
  throughputMixed(llvm::StringRef jobType,
                  const std::map<std::string, unsigned> &counts) const;

  /// The GPU counts the oracle knows for `jobType` (ascending); empty when
  /// the job type is unknown.
  virtual std::vector<unsigned> counts(llvm::StringRef jobType) const = 0;

  /// Every job type the oracle knows, sorted.
  virtual std::vector<std::string> jobTypes() const = 0;

  /// Every GPU type the oracle knows, sorted.
  virtual std::vector<std::string> gpuTypes() const = 0;

  /// Compute time and traffic per iteration, when the oracle can tell.
  virtual std::optional<IterationProfile>
  iterationProfile(llvm::StringRef jobType, unsigned count,
                   llvm::StringRef gpuType) const;
};

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_THROUGHPUTORACLE_H
