//===- OracleTableFuzzer.cpp - Throughput tables (Gavel's JSON) -----------===//

#include "FuzzSupport.h"
#include "weft/Sched/TableOracle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto oracle = weft::sched::TableOracle::parse(weft::fuzz::textOf(data, size),
                                                "fuzz.json");
  weft::fuzz::drop(oracle);
  return 0;
}
