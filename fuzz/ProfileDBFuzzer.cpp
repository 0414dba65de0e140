//===- ProfileDBFuzzer.cpp - Profile databases (JSON) ---------------------===//

#include "FuzzSupport.h"
#include "weft/Cost/ProfileDB.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto db = weft::parseProfileDB(weft::fuzz::textOf(data, size), "fuzz.json");
  weft::fuzz::drop(db);
  return 0;
}
