//===- JobTypes.cpp - Checking job types against the oracle --------------===//

#include "weft/Sched/SchedCluster.h"
#include "weft/Sched/Workload.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cstring>

using namespace weft;
using namespace weft::sched;

double sched::samplesPerStep(const std::string &type) {
  llvm::StringRef name(type);
  // The compiler oracle's "MODEL[:OPTIONS];batch=N" (docs/Cells.md): an
  // iteration is one global batch of N samples.
  size_t batchAt = name.rfind("batch=");
  if (batchAt != llvm::StringRef::npos &&
      (batchAt == 0 || name[batchAt - 1] == ';' || name[batchAt - 1] == ':')) {
    unsigned batch = 0;
    if (!name.drop_front(batchAt + strlen("batch="))
             .take_until([](char c) { return c == ';'; })
             .trim()
             .getAsInteger(10, batch) &&
        batch > 0)
      return batch;
  }
  size_t at = name.rfind("(batch size ");
  if (at == llvm::StringRef::npos || !name.ends_with(")"))
    return 1;
  unsigned batch = 0;
  llvm::StringRef digits =
      name.drop_front(at + strlen("(batch size ")).drop_back();
  if (digits.getAsInteger(10, batch) || batch == 0)
    return 1;
  return batch;
}

std::string sched::referenceGpuType(const ThroughputOracle &oracle) {
  std::vector<std::string> types = oracle.gpuTypes();
  if (llvm::is_contained(types, "v100"))
    return "v100";
  return types.empty() ? std::string() : types.front();
}

llvm::Error sched::checkJobType(const ThroughputOracle &oracle,
                                llvm::StringRef type, unsigned scale,
                                llvm::StringRef where) {
  std::vector<unsigned> counts = oracle.counts(type);
  if (counts.empty())
    return badInput("{0}: unknown job type '{1}'; known job types: {2}", where,
                    type, llvm::join(oracle.jobTypes(), "; "));
  if (!llvm::is_contained(counts, scale)) {
    std::vector<std::string> names;
    for (unsigned c : counts)
      names.push_back(std::to_string(c));
    return badInput("{0}: job type '{1}' has no figures for {2} GPUs; known "
                    "GPU counts: {3}",
                    where, type, scale, llvm::join(names, ", "));
  }
  return llvm::Error::success();
}

llvm::Error sched::checkAllowedTypes(const Workload &workload,
                                     const SchedCluster &cluster) {
  for (const Job &job : workload.jobs) {
    if (job.allowedTypes.empty() ||
        llvm::any_of(job.allowedTypes, [&](const std::string &name) {
          return cluster.findType(name) >= 0;
        }))
      continue;
    std::vector<std::string> has;
    for (const GpuType &t : cluster.types)
      has.push_back(t.name);
    return badInput("{0}: 'gpu_types' allows only {1}, which cluster '{2}' "
                    "does not have (it has {3}): the job could never run",
                    job.origin, llvm::join(job.allowedTypes, ", "),
                    cluster.name, llvm::join(has, ", "));
  }
  return llvm::Error::success();
}
