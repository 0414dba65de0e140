//===- OracleFlag.cpp - weft-sched's --oracle -----------------------------===//

#include "OracleFlag.h"
#include "weft/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace weft;

llvm::Expected<LoadedOracle> weft::loadOracle(llvm::StringRef oracleArg,
                                              llvm::StringRef clusterArg) {
  LoadedOracle loaded;
  llvm::StringRef spec = oracleArg;
  if (spec.consume_front("table:")) {
    auto table = sched::TableOracle::load(spec);
    if (!table)
      return table.takeError();
    loaded.table = table->get();
    loaded.oracle = std::move(*table);
    return loaded;
  }
  if (!spec.consume_front("compiler"))
    return badInput("--oracle '{0}': expected table:FILE or "
                    "compiler[:cache=FILE]",
                    oracleArg);
  auto options = cell::CompilerOracle::parseSpec(spec);
  if (!options)
    return options.takeError();
  if (clusterArg.startswith("gpus:"))
    return badInput("--oracle compiler needs a cluster spec file, not '{0}'",
                    clusterArg);
  auto text = llvm::MemoryBuffer::getFile(clusterArg);
  if (!text)
    return badInput("{0}: cannot read cluster spec: {1}", clusterArg,
                    text.getError().message());
  auto cluster = parseClusterSpec((*text)->getBuffer(), clusterArg);
  if (!cluster)
    return cluster.takeError();
  loaded.spec = std::make_unique<ClusterSpec>(std::move(*cluster));
  auto oracle = cell::CompilerOracle::create(*loaded.spec, (*text)->getBuffer(),
                                             *options);
  if (!oracle)
    return oracle.takeError();
  loaded.compiler = oracle->get();
  loaded.oracle = std::move(*oracle);
  return loaded;
}
