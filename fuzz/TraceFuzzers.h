//===- TraceFuzzers.h - The oracle the trace fuzzers parse against -*- C++
//-*-===//

#ifndef WEFT_FUZZ_TRACEFUZZERS_H
#define WEFT_FUZZ_TRACEFUZZERS_H

#include "FuzzSupport.h"
#include "weft/Sched/TableOracle.h"
#include <cstdlib>

namespace weft::fuzz {

/// Gavel's throughput table (data/gavel), loaded once.
inline const sched::TableOracle &gavelOracle() {
  static std::unique_ptr<sched::TableOracle> oracle = [] {
    auto loaded = sched::TableOracle::load(
        sourcePath("data/gavel/simulation_throughputs.json"));
    if (!loaded) {
      llvm::errs() << llvm::toString(loaded.takeError()) << "\n";
      std::abort();
    }
    return std::move(*loaded);
  }();
  return *oracle;
}

} // namespace weft::fuzz

#endif // WEFT_FUZZ_TRACEFUZZERS_H
