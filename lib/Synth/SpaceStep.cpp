//===- SpaceStep.cpp - A SearchSpace's transition function ----------------===//
//
// step() applies one choice at one position to a state: the operands'
// preconditions met by relayouts from what the state holds (priced once per
// type and pair of distributions, weft::spmd::planRelayout on the
// evaluator's collective costs), parameters stored at their first use, the
// held sets of the next state made canonical. The searches call it on every
// transition; its pieces are small named steps of one Transition.
// docs/Synthesis.md.
//
//===----------------------------------------------------------------------===//

#include "SpaceImpl.h"
#include "weft/Spmd/Relayout.h"
#include "llvm/Support/Compiler.h"

using namespace weft;
using namespace weft::synth;
using spmd::AxisDist;
using spmd::DistAttr;

namespace weft::synth {
/// One application of step() (friend of SearchSpace): the step's result
/// so far, its communication per representative and the held sets it
/// touches. step() is the searches' inner loop: its named pieces are
/// inlined into it (as fast as the one function they were).
struct Transition {
  /// The relayout of a value of type `typeId` from `from` to `to`.
  static const RelayoutCost &relayoutCost(SearchSpace &s, unsigned typeId,
                                          DistId from, DistId to, bool grad,
                                          bool zero3);

  /// A held set this step touches, and its own distribution.
  struct Entry {
    unsigned value;
    SearchSpace::HeldSet set;
    DistId own = 0;
    /// The held set's id in `key` (none for a first use or a result): an
    /// entry left as it was keeps its id without interning.
    std::optional<HeldId> origin = std::nullopt;
  };

  SearchSpace &s;
  unsigned p;
  const StateKey &key;
  const StepChoice &choice;
  StepDetail *detail;
  const OpInfo &op;
  const OpOption &option;
  unsigned reps;
  llvm::ArrayRef<unsigned> liveNow;
  StepResult out;
  RepVector comm;
  double optimizer = 0;
  /// Checkpoints of a recomputed op: (value, distribution) kept.
  llvm::SmallVector<std::pair<unsigned, DistId>, 4> checkpoints;
  llvm::SmallVector<Entry, 6> touched;

  Transition(SearchSpace &s, unsigned p, const StateKey &key,
             const StepChoice &choice, StepDetail *detail)
      : s(s), p(p), key(key), choice(choice), detail(detail), op(s.ops_[p]),
        option(op.options[choice.option]), reps(s.numReps()),
        liveNow(s.liveAt_[p]) {}

  Entry *find(unsigned v) {
    for (Entry &e : touched)
      if (e.value == v)
        return &e;
    return nullptr;
  }
  /// The op's own memory and communication, before its operands.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void start();
  /// Meets operand slot `i` (value `v`): takes its held set (or stores a
  /// leaf used here first), keeps it as a checkpoint of a recomputed op
  /// and relays it to what the option needs. False when impossible.
  LLVM_ATTRIBUTE_ALWAYS_INLINE bool meetOperand(unsigned i, unsigned v);
  /// The touched entry of `v` (created from the state or from the chosen
  /// storage of a leaf used here first); null when impossible.
  LLVM_ATTRIBUTE_ALWAYS_INLINE Entry *entryOf(unsigned i, unsigned v,
                                              DistId want);
  /// Drops from the touched held sets what no later use can require.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void canonicalise();
  /// The next state: touched values' held sets interned, the rest as held.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void nextKey();
  /// A kept op closes the open run: nothing produced before it is
  /// recomputed with a later op.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void closeRun();
  /// The step's cost: the slowest representative's compute, the slowest's
  /// communication and the optimizer.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void price();
};
} // namespace weft::synth

DistId SearchSpace::intern(DistAttr d) {
  auto [it, inserted] = distIds_.try_emplace(d, dists_.size());
  if (inserted)
    dists_.push_back(d);
  return it->second;
}

HeldId SearchSpace::internHeld(const HeldSet &s) {
  auto [it, inserted] = heldIds_.try_emplace(s, heldSets_.size());
  if (inserted)
    heldSets_.push_back(s);
  return it->second;
}

llvm::ArrayRef<StorageOption> SearchSpace::storageOptions(unsigned value,
                                                          DistId use) {
  const ValueInfo &v = values_[value];
  auto [it, inserted] =
      storage_.try_emplace({(uint64_t(v.typeId) << 8) | uint64_t(v.kind), use});
  if (inserted)
    it->second = makeStorageOptions(v, use);
  return it->second;
}

const RelayoutCost &Transition::relayoutCost(SearchSpace &s, unsigned typeId,
                                             DistId from, DistId to, bool grad,
                                             bool zero3) {
  SearchSpace::Impl &impl = *s.impl_;
  // 20 + 21 + 21 + 2 bits; ids beyond them are not expected (a space has
  // far fewer types and distributions), and the all-ones keys are reserved.
  assert(typeId < (1u << 20) - 1 && from < (1u << 21) && to < (1u << 21) &&
         "relayout key fields out of range");
  uint64_t key = uint64_t(typeId) << 44 | uint64_t(from) << 23 |
                 uint64_t(to) << 2 | uint64_t(grad) << 1 | uint64_t(zero3);
  auto [it, inserted] = impl.relayoutIndex.try_emplace(key, 0);
  if (!inserted)
    return impl.relayouts[it->second];
  it->second = impl.relayouts.size();
  RelayoutCost &c = impl.relayouts.emplace_back();
  auto steps = spmd::planRelayout(s.dist(from), s.dist(to));
  if (mlir::failed(steps))
    return c;
  c.ok = true;
  unsigned reps = s.numReps();
  c.comm.assign(reps, 0);
  c.transient.assign(reps, 0);
  auto type = impl.types[typeId];
  for (const spmd::RelayoutStep &st : *steps) {
    AxisMask mask = 1u << st.axis;
    auto inBytes = [&](unsigned d) {
      return impl.shardBytes(type, st.before, d);
    };
    auto outBytes = [&](unsigned d) {
      return impl.shardBytes(type, st.after, d);
    };
    spmd::Collective fwd = spmd::Collective::None, bwd = spmd::Collective::None;
    bool byResult = false, reverses = false;
    switch (st.kind) {
    case spmd::RelayoutKind::Shard:
      break;
    case spmd::RelayoutKind::AllGather:
      fwd = spmd::Collective::AllGather;
      bwd = spmd::Collective::ReduceScatter;
      break;
    case spmd::RelayoutKind::ReduceScatter:
      fwd = spmd::Collective::ReduceScatter;
      bwd = spmd::Collective::AllGather;
      byResult = true;
      break;
    case spmd::RelayoutKind::AllReduce:
      fwd = spmd::Collective::AllReduce;
      bwd = st.before.getAxes()[st.axis].kind == AxisDist::Kind::Max
                ? spmd::Collective::None
                : spmd::Collective::AllReduce;
      break;
    case spmd::RelayoutKind::AllToAll:
      fwd = bwd = spmd::Collective::AllToAll;
      reverses = true;
      break;
    }
    if (fwd != spmd::Collective::None)
      ++c.collectives;
    auto fwdBytes = [&](unsigned d) {
      return byResult ? outBytes(d) : inBytes(d);
    };
    for (unsigned r = 0; r < reps; ++r) {
      unsigned rep = s.repDevices[r];
      double t = impl.priceAlong(fwd, mask, rep, fwdBytes);
      if (grad && spmd::communicates(bwd)) {
        t += impl.priceAlong(bwd, mask, rep, [&](unsigned d) {
          return reverses ? outBytes(d) : fwdBytes(d);
        });
        if (zero3 && fwd == spmd::Collective::AllGather &&
            !impl.eval.keepGatheredParameters)
          t +=
              impl.priceAlong(spmd::Collective::AllGather, mask, rep, fwdBytes);
      }
      c.comm[r] += t;
      if (fwd != spmd::Collective::None)
        c.bytes = std::max(c.bytes, fwdBytes(rep));
      c.transient[r] = std::max(c.transient[r], outBytes(rep));
    }
  }
  c.maxSeconds =
      c.comm.empty() ? 0 : *std::max_element(c.comm.begin(), c.comm.end());
  return c;
}

/// Positions 1..n-1 whose count is at most `slack` above the least, with 0
/// and n.
static std::vector<unsigned> leastPositions(llvm::ArrayRef<size_t> count,
                                            unsigned slack) {
  unsigned n = count.size();
  size_t least = ~size_t(0);
  for (unsigned p = 1; p < n; ++p)
    least = std::min(least, count[p]);
  std::vector<unsigned> out{0};
  for (unsigned p = 1; p < n; ++p)
    if (count[p] <= least + slack)
      out.push_back(p);
  out.push_back(n);
  return out;
}

std::vector<unsigned> SearchSpace::cuts(unsigned slack) const {
  std::vector<size_t> count;
  for (unsigned p = 0; p < numPositions(); ++p)
    count.push_back(live(p).size());
  return leastPositions(count, slack);
}

std::vector<unsigned> SearchSpace::checkpointCuts() const {
  unsigned n = numPositions();
  std::vector<unsigned> span(values_.size(), 0);
  for (unsigned p = 0; p < n; ++p)
    for (unsigned v : live(p))
      ++span[v];
  std::vector<size_t> count;
  for (unsigned p = 0; p < n; ++p)
    count.push_back(
        llvm::count_if(live(p), [&](unsigned v) { return 2 * span[v] <= n; }));
  return leastPositions(count, /*slack=*/0);
}

const RepVector &SearchSpace::shardBytes(unsigned value, DistId d) {
  auto [it, inserted] = shardBytes_.try_emplace(
      (uint64_t(values_[value].typeId) << 32) | uint64_t(d));
  if (inserted)
    for (unsigned rep : repDevices_)
      it->second.push_back(
          impl_->shardBytes(impl_->types[values_[value].typeId], dist(d), rep));
  return it->second;
}

const RepVector *SearchSpace::relayoutSeconds(unsigned value, DistId from,
                                              DistId to, bool zero3) {
  const ValueInfo &info = values_[value];
  const RelayoutCost &c =
      Transition::relayoutCost(*this, info.typeId, from, to, info.grad, zero3);
  return c.ok ? &c.comm : nullptr;
}

llvm::ArrayRef<DistId> SearchSpace::usefulAt(unsigned value, unsigned p) const {
  const ValueInfo &info = values_[value];
  unsigned k = std::lower_bound(info.uses.begin(), info.uses.end(), p) -
               info.uses.begin();
  return usefulFrom_[value][k];
}

void SearchSpace::forEachChoice(
    unsigned p, llvm::function_ref<void(const StepChoice &)> f) {
  const OpInfo &op = ops_[p];
  for (unsigned o = 0; o < op.options.size(); ++o) {
    const OpOption &option = op.options[o];
    StepChoice choice;
    choice.option = o;
    choice.storage.assign(op.operands.size(), 0);
    // Operands that are leaves used for the first time choose a storage.
    llvm::SmallVector<unsigned, 4> firstUse;
    llvm::SmallVector<unsigned, 4> counts;
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      const ValueInfo &info = values_[v];
      if (info.defPos >= 0 || info.uses.front() != p ||
          option.operands[i] == kNoDist)
        continue;
      // The first operand slot using the leaf decides.
      bool earlier = false;
      for (unsigned j = 0; j < i; ++j)
        earlier |= op.operands[j] == v;
      if (earlier)
        continue;
      size_t n = storageOptions(v, option.operands[i]).size();
      if (n == 0) {
        firstUse.clear();
        counts.assign(1, 0);
        break;
      }
      firstUse.push_back(i);
      counts.push_back(n);
    }
    if (llvm::is_contained(counts, 0u))
      continue;
    // Odometer over the storage options.
    llvm::SmallVector<unsigned, 4> idx(firstUse.size(), 0);
    // Every op with a backward pass (one saving nothing still carries the
    // run on).
    bool recomputable = recompute_ && op.grad;
    while (true) {
      for (auto [k, i] : llvm::enumerate(firstUse))
        choice.storage[i] = idx[k];
      choice.recompute = false;
      f(choice);
      if (recomputable) {
        choice.recompute = true;
        f(choice);
      }
      int k = int(firstUse.size()) - 1;
      while (k >= 0 && ++idx[k] >= counts[k])
        idx[k--] = 0;
      if (k < 0)
        break;
    }
  }
}

void Transition::start() {
  // Recomputed (docs/Synthesis.md "Recomputation"): the saved tensors join
  // the open run instead of being kept; the forward runs again.
  out.recompute = choice.recompute;
  out.neutral = !op.grad;
  if (choice.recompute) {
    out.committed.assign(reps, 0);
    out.run.assign(option.kept.begin(), option.kept.end());
  } else {
    out.committed.assign(option.kept.begin(), option.kept.end());
    out.run.assign(reps, 0);
  }
  out.transient.assign(option.produced.begin(), option.produced.end());
  comm.assign(option.recipeComm.begin(), option.recipeComm.end());
  if (choice.recompute)
    for (unsigned r = 0; r < reps; ++r)
      comm[r] += option.recipeForward[r];
}

Transition::Entry *Transition::entryOf(unsigned i, unsigned v, DistId want) {
  if (Entry *e = find(v))
    return e;
  const ValueInfo &info = s.values_[v];
  touched.push_back({v, {}});
  Entry *e = &touched.back();
  if (info.defPos < 0 && info.uses.front() == p) {
    auto opts = s.storageOptions(v, want);
    if (choice.storage[i] >= opts.size())
      return nullptr;
    const StorageOption &so = opts[choice.storage[i]];
    e->set.tag = info.kind == ValueInfo::Kind::Parameter
                     ? uint8_t(1 + unsigned(so.strategy))
                     : 0;
    e->set.dists.push_back(so.stored);
    for (unsigned r = 0; r < reps; ++r) {
      comm[r] += so.sync[r];
      out.committed[r] += so.committed[r];
    }
    optimizer += so.optimizerSeconds;
  } else {
    auto it = llvm::find(liveNow, v);
    if (it == liveNow.end())
      return nullptr; // Not live: an order bug.
    e->origin = key[it - liveNow.begin()];
    e->set = s.heldSets_[*e->origin];
  }
  e->own = e->set.dists.front();
  return e;
}

bool Transition::meetOperand(unsigned i, unsigned v) {
  DistId want = option.operands[i];
  if (want == kNoDist)
    return true;
  Entry *e = entryOf(i, v, want);
  if (!e)
    return false;
  const ValueInfo &info = s.values_[v];
  // A recomputed op keeps what it cannot get back by recomputing its
  // run: an operand that is not a leaf, unless produced in the open run
  // and used as produced.
  if (choice.recompute && info.defPos >= 0 &&
      !((e->set.tag & SearchSpace::kRunTag) && want == e->own) &&
      !llvm::is_contained(checkpoints, std::make_pair(v, want))) {
    checkpoints.push_back({v, want});
    const RepVector &bytes = s.shardBytes(v, want);
    for (unsigned r = 0; r < reps; ++r)
      out.committed[r] += bytes[r];
  }
  if (llvm::is_contained(e->set.dists, want))
    return true;
  // Every relayout starts from the value's own (first) distribution, as
  // the program builder emits them.
  bool zero3 = e->set.tag == 1 + unsigned(spmd::ParamStrategy::Zero3);
  DistId from = e->set.dists.front();
  const RelayoutCost &best =
      relayoutCost(s, info.typeId, from, want, info.grad, zero3);
  if (!best.ok)
    return false;
  for (unsigned r = 0; r < reps; ++r) {
    comm[r] += best.comm[r];
    out.transient[r] = std::max(out.transient[r], best.transient[r]);
  }
  if (detail)
    detail->relayouts.push_back(
        {v, from, want, best.maxSeconds, best.bytes, best.collectives});
  e->set.dists.insert(
      std::lower_bound(e->set.dists.begin() + 1, e->set.dists.end(), want),
      want);
  return true;
}

void Transition::canonicalise() {
  // Extra distributions no later use can require are dropped; a value
  // whose every possibly-required distribution is held keeps just those
  // (its own distribution no longer matters).
  for (Entry &e : touched) {
    const ValueInfo &info = s.values_[e.value];
    unsigned k = std::upper_bound(info.uses.begin(), info.uses.end(), p) -
                 info.uses.begin();
    if (k >= info.uses.size())
      continue; // Dead after this step.
    const std::vector<DistId> &useful = s.usefulFrom_[e.value][k];
    llvm::SmallVector<DistId, 2> kept{e.set.dists.front()};
    bool all = true;
    for (DistId w : useful) {
      bool held = llvm::is_contained(e.set.dists, w);
      all &= held;
      if (held && w != kept.front())
        kept.push_back(w);
    }
    if (all && !useful.empty()) {
      kept.assign(useful.begin(), useful.end());
    } else {
      std::sort(kept.begin() + 1, kept.end());
    }
    e.set.dists = std::move(kept);
    // Its own distribution dropped: no later use gets it as produced.
    if (e.set.dists.front() != e.own)
      e.set.tag &= ~SearchSpace::kRunTag;
  }
}

void Transition::nextKey() {
  for (auto [i, v] : llvm::enumerate(op.results))
    touched.push_back({v,
                       {choice.recompute ? SearchSpace::kRunTag : uint8_t(0),
                        {option.results[i]}}});
  llvm::ArrayRef<unsigned> liveNext = s.liveAt_[p + 1];
  out.next.reserve(liveNext.size());
  for (unsigned v : liveNext) {
    if (Entry *e = find(v)) {
      out.next.push_back(e->origin && s.heldSets_[*e->origin] == e->set
                             ? *e->origin
                             : s.internHeld(e->set));
      continue;
    }
    auto it = llvm::find(liveNow, v);
    out.next.push_back(it == liveNow.end() ? 0 : key[it - liveNow.begin()]);
  }
}

void Transition::closeRun() {
  if (!s.recompute_ || choice.recompute || !op.grad)
    return;
  for (HeldId &id : out.next)
    if (s.heldSets_[id].tag & SearchSpace::kRunTag) {
      SearchSpace::HeldSet plain = s.heldSets_[id];
      plain.tag &= ~SearchSpace::kRunTag;
      id = s.internHeld(plain);
    }
}

void Transition::price() {
  double compute = 0;
  for (unsigned r = 0; r < reps; ++r)
    compute = std::max(compute, option.compute[r] +
                                    (choice.recompute ? option.forward[r] : 0));
  double commMax = *std::max_element(comm.begin(), comm.end());
  out.cost = compute + commMax + optimizer;
  if (detail) {
    detail->computeSeconds = compute;
    detail->commSeconds = commMax;
    detail->commLeast = *std::min_element(comm.begin(), comm.end());
    detail->optimizerSeconds = optimizer;
  }
}

std::optional<StepResult> SearchSpace::step(unsigned p, const StateKey &key,
                                            const StepChoice &choice,
                                            StepDetail *detail) {
  Transition t(*this, p, key, choice, detail);
  t.start();
  for (auto [i, v] : llvm::enumerate(t.op.operands))
    if (!t.meetOperand(i, v))
      return std::nullopt;
  t.canonicalise();
  t.nextKey();
  t.closeRun();
  t.price();
  return std::move(t.out);
}
