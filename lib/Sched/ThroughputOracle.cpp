//===- ThroughputOracle.cpp - Oracle interface defaults ------------------===//

#include "weft/Sched/ThroughputOracle.h"

using namespace weft;
using namespace weft::sched;

ThroughputOracle::~ThroughputOracle() = default;

std::optional<IterationProfile>
ThroughputOracle::iterationProfile(llvm::StringRef, unsigned,
                                   llvm::StringRef) const {
  return std::nullopt;
}

std::optional<double> ThroughputOracle::throughputMixed(
    llvm::StringRef, const std::map<std::string, unsigned> &) const {
  return std::nullopt;
}
