//===- TableOracle.h - Throughputs from Gavel's measured JSON ----*- C++
//-*-===//
//
// Gavel's format: {worker_type: {"('<model> (batch size B)', scale)":
// {"null": steps/s alone, ...co-location entries...}}}. Worker types
// "<type>_unconsolidated" hold the figures of jobs spread over servers.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SCHED_TABLEORACLE_H
#define WEFT_SCHED_TABLEORACLE_H

#include "weft/Sched/ThroughputOracle.h"
#include "llvm/Support/Error.h"
#include <map>
#include <memory>

namespace weft {
namespace sched {

/// Splits a Gavel key "('ResNet-18 (batch size 16)', 4)" into the job type
/// and the scale factor.
llvm::Expected<std::pair<std::string, unsigned>>
parseGavelKey(llvm::StringRef key);

/// An oracle backed by Gavel's throughput table.
class TableOracle : public ThroughputOracle {
public:
  /// Parses the JSON text; `fileName` is used in messages.
  static llvm::Expected<std::unique_ptr<TableOracle>>
  parse(llvm::StringRef text, llvm::StringRef fileName);
  /// Reads and parses `path`.
  static llvm::Expected<std::unique_ptr<TableOracle>>
  load(llvm::StringRef path);

  std::optional<double> throughput(llvm::StringRef jobType, unsigned count,
                                   llvm::StringRef gpuType,
                                   bool consolidated) const override;
  std::vector<unsigned> counts(llvm::StringRef jobType) const override;
  std::vector<std::string> jobTypes() const override;
  std::vector<std::string> gpuTypes() const override;
  std::optional<IterationProfile>
  iterationProfile(llvm::StringRef jobType, unsigned count,
                   llvm::StringRef gpuType) const override;

  /// Gavel's msr traces ask for 2-8 GPUs for job types measured on one GPU
  /// only (A3C, CycleGAN, Recommendation). With this set, such a job on c
  /// GPUs (c in 2, 4, 8) gets the one-GPU iteration rate, i.e. perfect weak
  /// scaling (documented assumption; off by default).
  void setAssumeLinearScaling(bool value) { linearScaling = value; }

private:
  bool linearScaling = false;
  /// (gpu type incl. "_unconsolidated", job type, count) -> steps/s.
  std::map<std::tuple<std::string, std::string, unsigned>, double> table;
  std::map<std::string, std::vector<unsigned>> countsByType;
  std::vector<std::string> baseGpuTypes;
};

/// The model size (parameters, in millions) assumed for a Gavel job type, for
/// the network model's traffic estimate; 0 when unknown.
double estimatedParamsMillions(llvm::StringRef jobType);

} // namespace sched
} // namespace weft

#endif // WEFT_SCHED_TABLEORACLE_H
