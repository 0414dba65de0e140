//===- CollectivePricer.cpp - Collective times for the evaluator ----------===//

#include "weft/Eval/CollectivePricer.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cstring>

using namespace weft;
using spmd::Collective;

double CollectivePricer::seconds(Collective kind,
                                 llvm::ArrayRef<unsigned> group,
                                 llvm::ArrayRef<double> bytes,
                                 CollectiveVariant variant) {
  if (group.size() <= 1 || !spmd::communicates(kind))
    return 0;
  std::string key;
  auto put = [&](const void *p, size_t n) {
    key.append(static_cast<const char *>(p), n);
  };
  int tag[] = {int(kind), int(variant.algo), int(variant.bestAllReduce),
               int(variant.uneven)};
  put(tag, sizeof(tag));
  put(&variant.bucketBytes, sizeof(double));
  put(group.data(), group.size() * sizeof(unsigned));
  put(bytes.data(), bytes.size() * sizeof(double));
  auto [it, inserted] = memo.try_emplace(key, 0);
  if (inserted)
    it->second = compute(kind, group, bytes, variant);
  return it->second;
}

double CollectivePricer::compute(Collective kind,
                                 llvm::ArrayRef<unsigned> group,
                                 llvm::ArrayRef<double> bytes,
                                 CollectiveVariant variant) {
  double largest = *std::max_element(bytes.begin(), bytes.end());
  if (largest <= 0)
    return 0;
  // Bucketed: this contribution's share of a full bucket's collective.
  if (double k = bucketScale(variant, largest); k > 1) {
    llvm::SmallVector<double, 8> filled;
    for (double b : bytes)
      filled.push_back(b * k);
    CollectiveVariant whole = variant;
    whole.bucketBytes = 0;
    return compute(kind, group, filled, whole) / k;
  }
  // A measured time when every member is of one type and the DB has it.
  if (db) {
    llvm::StringRef type = spec.typeOf(group[0]).name;
    bool sameType = llvm::all_of(
        group, [&](unsigned d) { return spec.typeOf(d).name == type; });
    if (sameType)
      if (auto t = db->collectiveSeconds(type, spmd::toString(kind),
                                         group.size(), largest))
        return *t;
  }
  switch (kind) {
  case Collective::AllReduce:
    if (variant.bestAllReduce)
      return allReduceSeconds(spec, group, largest,
                              fastestAllReduce(spec, group, largest));
    return allReduceSeconds(spec, group, largest, variant.algo);
  case Collective::AllGather:
    return allGatherSeconds(spec, group, bytes, variant.uneven, options);
  case Collective::ReduceScatter:
    return reduceScatterSeconds(spec, group, bytes, variant.uneven, options);
  case Collective::AllToAll:
    return allToAllSeconds(spec, group, bytes);
  default:
    return 0;
  }
}
