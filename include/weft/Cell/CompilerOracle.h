//===- CompilerOracle.h - weft-sched's throughputs from the compiler -*- C++
//-*-===//
//
// `weft-sched --oracle compiler[:cache=FILE]` (docs/Cells.md, "The compiler
// oracle"): a job type names a model and its global batch
// (ModelSource.h); the throughput of `count` GPUs of one type, or of a
// heterogeneous Cell, is 1 / the Cell's iteration time from a CellEstimator
// (fast mode), the best over stage counts 1..maxStages. Answers are kept in
// a cache file, read at start and appended to as Cells are estimated, so a
// repeated simulation never synthesises again and gives identical answers.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CELL_COMPILERORACLE_H
#define WEFT_CELL_COMPILERORACLE_H

#include "weft/Cell/CellEstimator.h"
#include "weft/Sched/ThroughputOracle.h"
#include <memory>

namespace weft {
namespace cell {

struct CompilerOracleOptions {
  /// The cache file ("" : none).
  std::string cachePath;
  CellOptions cell;
  /// Stage counts tried per Cell.
  unsigned maxStages = 1;
  /// The largest Cell the oracle prices (counts() stops there).
  unsigned maxGpus = 64;
  /// Progress lines (a Cell estimated), without a newline.
  std::function<void(llvm::StringRef)> progress;
};

class CompilerOracle : public sched::ThroughputOracle {
public:
  /// An oracle for `cluster` (whose spec text, `clusterText`, keys the
  /// cache). Errors: an unreadable or malformed cache file (bad input).
  static llvm::Expected<std::unique_ptr<CompilerOracle>>
  create(const ClusterSpec &cluster, llvm::StringRef clusterText,
         const CompilerOracleOptions &options);
  ~CompilerOracle() override;

  /// Parses `options` of "compiler[:cache=FILE]" after "compiler".
  static llvm::Expected<CompilerOracleOptions> parseSpec(llvm::StringRef spec);

  std::optional<double> throughput(llvm::StringRef jobType, unsigned count,
                                   llvm::StringRef gpuType,
                                   bool consolidated) const override;
  std::optional<double>
  throughputMixed(llvm::StringRef jobType,
                  const std::map<std::string, unsigned> &counts) const override;
  std::vector<unsigned> counts(llvm::StringRef jobType) const override;
  std::vector<std::string> jobTypes() const override;
  std::vector<std::string> gpuTypes() const override;

  /// Where progress lines go (a Cell estimated).
  void setProgress(std::function<void(llvm::StringRef)> f) {
    options.progress = std::move(f);
  }
  /// The first error met while opening a job type's model (a job type the
  /// oracle then calls unknown), for the caller's message.
  std::optional<std::string> firstError() const { return error; }
  /// Cells estimated (not from the cache file) and read from it.
  unsigned estimated() const { return computed; }
  unsigned cacheHits() const { return hits; }

private:
  struct Model;
  CompilerOracle(const ClusterSpec &cluster, const CompilerOracleOptions &o);
  /// The model of `jobType`, opened on first use; null on error.
  Model *modelOf(llvm::StringRef jobType) const;
  /// Iterations/s of `jobType` on `devices` (cluster type names), best over
  /// stage counts; 0 when infeasible, none when the job type is bad.
  std::optional<double> rateOf(llvm::StringRef jobType,
                               const DeviceMultiset &devices) const;
  /// The cluster's type named `name` case-insensitively ("" if none).
  std::string clusterType(llvm::StringRef name) const;
  void append(const std::string &key, double rate) const;

  const ClusterSpec &cluster;
  CompilerOracleOptions options;
  std::string clusterKey;
  mutable mlir::MLIRContext context;
  mutable std::map<std::string, std::unique_ptr<Model>> models;
  /// (job type, "8xA100+4xT4") -> iterations/s (0 infeasible).
  mutable std::map<std::string, double> cache;
  mutable std::optional<std::string> error;
  mutable unsigned computed = 0, hits = 0;
};

} // namespace cell
} // namespace weft

#endif // WEFT_CELL_COMPILERORACLE_H
