//===- CostKey.cpp - Canonical byte keys of cost expressions --------------===//

#include "weft/Ratio/CostKey.h"
#include "llvm/ADT/ArrayRef.h"
#include <algorithm>
#include <cstring>
#include <map>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Appends the exact bytes of scalars, so that equal keys mean equal costs.
class KeyWriter {
public:
  void put(double x) {
    if (x == 0)
      x = 0; // -0.0 and 0.0 cost the same.
    char bytes[sizeof(double)];
    std::memcpy(bytes, &x, sizeof(double));
    key.append(bytes, sizeof(double));
  }
  void put(unsigned x) {
    char bytes[sizeof(unsigned)];
    std::memcpy(bytes, &x, sizeof(unsigned));
    key.append(bytes, sizeof(unsigned));
  }
  void put(const std::string &s) {
    put(static_cast<unsigned>(s.size()));
    key += s;
  }
  std::string take() { return std::move(key); }

private:
  std::string key;
};
} // namespace

std::string weft::ratio::linearKey(const LinearCost &cost) {
  // Merge terms on the same ratio and drop zeros: a + 1·B + 2·B == a + 3·B.
  std::map<std::pair<unsigned, unsigned>, double> merged;
  for (const RatioTerm &t : cost.terms)
    merged[{t.segment, t.deviceClass}] += t.coef;
  KeyWriter w;
  w.put(cost.constant);
  for (const auto &[index, coef] : merged) {
    if (coef == 0)
      continue;
    w.put(index.first);
    w.put(index.second);
    w.put(coef);
  }
  return w.take();
}

std::string weft::ratio::piecesKey(const MaxCost &cost) {
  std::vector<std::string> pieces;
  for (const LinearCost &piece : cost.pieces)
    pieces.push_back(linearKey(piece));
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  KeyWriter w;
  for (const std::string &p : pieces)
    w.put(p);
  return w.take();
}

static std::string maxKey(const MaxCost &cost) {
  KeyWriter w;
  w.put(cost.scale);
  w.put(piecesKey(cost));
  return w.take();
}

static std::string maxListKey(llvm::ArrayRef<MaxCost> list) {
  std::vector<std::string> keys;
  for (const MaxCost &m : list)
    keys.push_back(maxKey(m));
  // A sum of terms: order does not matter, repetition does.
  std::sort(keys.begin(), keys.end());
  KeyWriter w;
  w.put(static_cast<unsigned>(keys.size()));
  for (const std::string &k : keys)
    w.put(k);
  return w.take();
}

std::string weft::ratio::stepKey(const Step &step) {
  KeyWriter w;
  for (const StepClassCost &cost : step.perClass) {
    w.put(linearKey(cost.compute));
    w.put(maxListKey(cost.computeMax));
    w.put(linearKey(cost.comm));
    w.put(maxListKey(cost.commMax));
    std::map<unsigned, double> nic;
    for (const NicLoad &load : cost.nicLoads)
      nic[load.segment] += load.bytes;
    for (const auto &[segment, bytes] : nic) {
      w.put(segment);
      w.put(bytes);
    }
    w.put(~0u);
  }
  return w.take();
}
