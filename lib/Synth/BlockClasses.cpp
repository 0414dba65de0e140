//===- BlockClasses.cpp - Repeated blocks of the order --------------------===//
//
// lib/Synth/BlockClasses.h; docs/Synthesis.md "Memoisation of repeated
// blocks".
//
//===----------------------------------------------------------------------===//

#include "BlockClasses.h"
#include <cstring>

using namespace weft;
using namespace weft::synth;

namespace {
uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
} // namespace

unsigned BlockClasses::opTableId(unsigned p) {
  if (opTableOf.empty())
    opTableOf.assign(space.numPositions(), -1);
  if (opTableOf[p] >= 0)
    return unsigned(opTableOf[p]);
  const OpInfo &op = space.ops[p];
  std::vector<uint64_t> sig;
  sig.push_back(op.options.size());
  sig.push_back(op.operands.size());
  sig.push_back(op.results.size());
  for (const OpOption &o : op.options) {
    for (DistId d : o.operands)
      sig.push_back(d);
    for (DistId d : o.results)
      sig.push_back(d);
    for (unsigned r = 0; r < space.numReps(); ++r) {
      sig.push_back(bits(o.compute[r]));
      sig.push_back(bits(o.kept[r]));
      sig.push_back(bits(o.produced[r]));
    }
  }
  auto [it, inserted] = opTables.try_emplace(std::move(sig), opTables.size());
  opTableOf[p] = int(it->second);
  return it->second;
}

unsigned BlockClasses::classOf(unsigned a, unsigned b) {
  std::vector<uint64_t> sig;
  // Where a value comes from, in block-relative terms.
  auto ref = [&](unsigned v) {
    const ValueInfo &info = space.values[v];
    if (info.defPos >= int(a)) {
      unsigned k = llvm::find(space.ops[info.defPos].results, v) -
                   space.ops[info.defPos].results.begin();
      sig.insert(sig.end(), {1, uint64_t(info.defPos - a), k});
      return;
    }
    llvm::ArrayRef<unsigned> entry = space.live(a);
    if (auto it = llvm::find(entry, v); it != entry.end()) {
      sig.insert(sig.end(), {2, uint64_t(it - entry.begin())});
      return;
    }
    // A leaf first used in the block.
    sig.insert(sig.end(), {3, uint64_t(info.kind), info.typeId, info.grad,
                           uint64_t(info.uses.front() - a)});
  };
  sig.push_back(b - a);
  for (unsigned v : space.live(a)) {
    const ValueInfo &info = space.values[v];
    sig.insert(sig.end(), {uint64_t(info.kind), info.typeId, info.grad});
  }
  for (unsigned q = a; q < b; ++q) {
    sig.push_back(opTableId(q));
    for (unsigned v : space.ops[q].operands)
      ref(v);
    for (unsigned v : space.ops[q].results)
      sig.push_back(space.values[v].grad);
    sig.push_back(~uint64_t(0));
    for (unsigned v : space.live(q + 1))
      ref(v);
    sig.push_back(~uint64_t(0) - 1);
  }
  // What later uses may require of the exit's live values: held sets are
  // canonicalised and states compared by it, so blocks whose exits feed
  // different uses are not one class.
  for (unsigned v : space.live(b)) {
    llvm::ArrayRef<DistId> useful = space.usefulAt(v, b);
    sig.push_back(useful.size());
    sig.insert(sig.end(), useful.begin(), useful.end());
  }
  auto [it, inserted] =
      blockClasses.try_emplace(std::move(sig), blockClasses.size());
  return it->second;
}

std::vector<RepeatedBlocks>
weft::synth::repeatedBlocks(const SearchSpace &space) {
  std::vector<unsigned> cut = space.cuts();
  BlockClasses classes(space);
  std::vector<RepeatedBlocks> byClass;
  for (unsigned k = 0; k + 1 < cut.size(); ++k) {
    unsigned cls = classes.classOf(cut[k], cut[k + 1]);
    if (cls >= byClass.size())
      byClass.resize(cls + 1);
    byClass[cls].length = cut[k + 1] - cut[k];
    byClass[cls].starts.push_back(cut[k]);
  }
  std::vector<RepeatedBlocks> out;
  for (RepeatedBlocks &r : byClass)
    if (r.starts.size() > 1)
      out.push_back(std::move(r));
  return out;
}
