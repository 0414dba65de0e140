//===- CsvTraceFuzzer.cpp - Weft's CSV job traces -------------------------===//

#include "TraceFuzzers.h"
#include "weft/Sched/Workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto workload = weft::sched::parseCsvTrace(
      weft::fuzz::textOf(data, size), "fuzz.csv", weft::fuzz::gavelOracle());
  weft::fuzz::drop(workload);
  return 0;
}
