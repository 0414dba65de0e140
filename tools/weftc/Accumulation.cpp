//===- Accumulation.cpp - Micro-batch counts weftc tries ------------------===//

#include "Accumulation.h"
#include "weft/Support/Error.h"

using namespace weft;

/// Whether `m` micro-batches split `batch` evenly with at least one sample
/// per device in each.
static bool splits(int64_t batch, unsigned devices, int64_t m) {
  return batch % m == 0 && batch / m >= int64_t(std::max(devices, 1u));
}

llvm::Expected<std::vector<int64_t>>
weft::microBatchCounts(llvm::StringRef flag, int64_t batch, unsigned devices,
                       bool batchSymbolic) {
  if (flag == "auto") {
    std::vector<int64_t> counts{1};
    if (batchSymbolic)
      for (int64_t m = 2; splits(batch, devices, m); m *= 2)
        counts.push_back(m);
    return counts;
  }
  int64_t m = 0;
  if (flag.getAsInteger(10, m) || m < 1)
    return badInput("--micro-batches '{0}' is not 'auto' or a positive "
                    "integer",
                    flag);
  if (m == 1)
    return std::vector<int64_t>{1};
  if (!batchSymbolic)
    return badInput("--micro-batches {0} needs a model whose batch dim is "
                    "symbolic (this model fixes it)",
                    m);
  if (!splits(batch, devices, m))
    return badInput("--micro-batches {0} does not split the global batch of "
                    "{1} samples into equal micro-batches of at least one "
                    "sample per device ({2} devices)",
                    m, batch, devices);
  return std::vector<int64_t>{m};
}
