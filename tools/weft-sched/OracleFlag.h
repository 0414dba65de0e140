//===- OracleFlag.h - weft-sched's --oracle ------------------------*- C++
//-*-===//
//
// `--oracle table:FILE` (Gavel's measured table, lib/Sched) or
// `--oracle compiler[:cache=FILE][:max-stages=K]` (Cells from the
// synthesizer, lib/Cell; needs a cluster spec file).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTSCHED_ORACLEFLAG_H
#define WEFT_TOOLS_WEFTSCHED_ORACLEFLAG_H

#include "weft/Cell/CompilerOracle.h"
#include "weft/Sched/TableOracle.h"
#include <memory>

namespace weft {

/// The oracle --oracle names, and what it needs kept alive.
struct LoadedOracle {
  std::unique_ptr<ClusterSpec> spec;
  std::unique_ptr<sched::ThroughputOracle> oracle;
  /// The same oracle by kind (one of the two is set).
  sched::TableOracle *table = nullptr;
  cell::CompilerOracle *compiler = nullptr;
};

/// Loads the oracle of `oracleArg` for the cluster `clusterArg`. Errors:
/// bad input (one line).
llvm::Expected<LoadedOracle> loadOracle(llvm::StringRef oracleArg,
                                        llvm::StringRef clusterArg);

} // namespace weft

#endif // WEFT_TOOLS_WEFTSCHED_ORACLEFLAG_H
