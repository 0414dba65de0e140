//===- RestartCost.cpp - Reconfiguration cost and per-policy values ------===//

#include "weft/Sched/RestartCost.h"
#include "ParseNumber.h"
#include "weft/Sched/Policy.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>

using namespace weft;
using namespace weft::sched;

double RestartCost::seconds(unsigned gpus) const {
  return std::min(capS, baseS + perGpuS * gpus);
}

double PerPolicyValue::get(llvm::StringRef policy) const {
  auto it = byPolicy.find(policy.str());
  return it == byPolicy.end() ? fallback : it->second;
}

llvm::Expected<PerPolicyValue> sched::parsePerPolicyValue(llvm::StringRef flag,
                                                          llvm::StringRef text,
                                                          double fallback,
                                                          bool allowNone) {
  PerPolicyValue result;
  result.fallback = fallback;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  llvm::SmallVector<llvm::StringRef> known;
  std::string knownText = knownPolicies();
  llvm::StringRef(knownText).split(known, ", ");
  bool sawFallback = false;
  for (llvm::StringRef item : items) {
    item = item.trim();
    auto [name, valueText] = item.contains('=')
                                 ? item.split('=')
                                 : std::make_pair(llvm::StringRef(), item);
    name = name.trim();
    valueText = valueText.trim();
    double value = 0;
    if (allowNone && valueText == "none")
      value = std::numeric_limits<double>::infinity();
    else if (parseFinite(valueText, value) || value < 0)
      return badInput("--{0} '{1}': '{2}' is not a number >= 0{3}", flag, text,
                      valueText, allowNone ? " or none" : "");
    if (name.empty()) {
      if (item.contains('='))
        return badInput("--{0} '{1}': expected V or POLICY=V, got '{2}'", flag,
                        text, item);
      if (sawFallback)
        return badInput("--{0} '{1}': more than one value for all policies",
                        flag, text);
      sawFallback = true;
      result.fallback = value;
      continue;
    }
    if (!llvm::is_contained(known, name))
      return badInput("--{0} '{1}': unknown policy '{2}'; known policies: {3}",
                      flag, text, name, knownText);
    if (!result.byPolicy.insert({name.str(), value}).second)
      return badInput("--{0} '{1}': policy '{2}' given twice", flag, text,
                      name);
  }
  return result;
}
