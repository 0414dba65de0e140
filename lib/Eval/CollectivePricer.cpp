//===- CollectivePricer.cpp - Collective times for the evaluator ----------===//

#include "weft/Eval/CollectivePricer.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cstring>

using namespace weft;
using spmd::Collective;

std::string weft::groupTypeName(const ClusterSpec &spec,
                                llvm::ArrayRef<unsigned> group) {
  std::vector<std::string> names;
  for (unsigned d : group)
    names.push_back(spec.typeOf(d).name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return llvm::join(names, "+");
}

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
  // The group as runs of consecutive ids and the bytes as runs of
  // bit-identical values, each run with its length: a collective over
  // thousands of devices of a few classes keys in tens of bytes, not in
  // tens of kilobytes (the encoding is one-to-one, as the raw arrays were).
  llvm::SmallVector<unsigned, 16> runs;
  for (unsigned i = 0; i < group.size();) {
    unsigned j = i + 1;
    while (j < group.size() && group[j] == group[j - 1] + 1)
      ++j;
    runs.append({group[i], j - i});
    i = j;
  }
  unsigned numRuns = runs.size();
  put(&numRuns, sizeof(numRuns));
  put(runs.data(), runs.size() * sizeof(unsigned));
  for (unsigned i = 0; i < bytes.size();) {
    unsigned j = i + 1;
    while (j < bytes.size() &&
           std::memcmp(&bytes[j], &bytes[i], sizeof(double)) == 0)
      ++j;
    unsigned length = j - i;
    put(&bytes[i], sizeof(double));
    put(&length, sizeof(length));
    i = j;
  }
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
  // A measured time when the DB has one for the group's device types: the
  // type's name, or for a group of mixed types their distinct names, sorted,
  // joined with '+' (weft-profile --in-situ on ranks of several classes).
  if (db)
    if (auto t =
            db->collectiveSeconds(groupTypeName(spec, group),
                                  spmd::toString(kind), group.size(), largest))
      return *t;
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
