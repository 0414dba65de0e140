//===- ClusterSpecFuzzer.cpp - Cluster spec YAML --------------------------===//

#include "FuzzSupport.h"
#include "weft/Cluster/ClusterSpec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto spec =
      weft::parseClusterSpec(weft::fuzz::textOf(data, size), "fuzz.yaml");
  weft::fuzz::drop(spec);
  return 0;
}
