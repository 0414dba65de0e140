//===- StepCollapse.cpp - Merge steps with the same cost pattern ----------===//

#include "weft/Ratio/StepCollapse.h"
#include "weft/Ratio/CostKey.h"
#include "llvm/ADT/StringMap.h"

using namespace weft;
using namespace weft::ratio;

CollapsedSteps weft::ratio::collapseSteps(const RatioProblem &problem) {
  CollapsedSteps result;
  llvm::StringMap<unsigned> byKey;
  for (unsigned k = 0; k < problem.steps.size(); ++k) {
    const Step &step = problem.steps[k];
    auto [it, inserted] =
        byKey.try_emplace(stepKey(step), result.representative.size());
    if (inserted) {
      result.representative.push_back(k);
      result.multiplicity.push_back(0);
    }
    result.multiplicity[it->second] += step.multiplicity;
    result.distinctOf.push_back(it->second);
  }
  return result;
}
