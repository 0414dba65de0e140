//===- PolicyRegistry.cpp - Policies by name -----------------------------===//

#include "PolicyUtil.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::sched;

std::string sched::knownPolicies() {
  return "fifo, maxmin-agnostic, gavel-maxmin, gavel-throughput, hadar, "
         "hadar-fork, crius, rubick, weft";
}

llvm::Expected<std::unique_ptr<Policy>>
sched::createPolicy(llvm::StringRef name, const PolicyOptions &opts) {
  if (name == "fifo")
    return createFifo();
  if (name == "maxmin-agnostic")
    return createMaxMinAgnostic();
  if (name == "gavel-maxmin")
    return createGavelMaxMin();
  if (name == "gavel-throughput")
    return createGavelThroughput();
  if (name == "hadar")
    return createHadar(opts);
  if (name == "hadar-fork") {
    PolicyOptions forking = opts;
    forking.fork = true;
    return createHadar(forking);
  }
  if (name == "crius")
    return createCrius();
  if (name == "rubick")
    return createRubick(opts);
  if (name == "weft")
    return createWeft();
  return badInput("unknown policy '{0}'; known policies: {1}", name,
                  knownPolicies());
}
