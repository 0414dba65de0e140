//===- Seeds.cpp - Plans chosen greedily, one position at a time ----------===//
//
// docs/Synthesis.md "Seeds": data parallel (parameters replicated, ZeRO-1,
// ZeRO-2 or in their least-memory storage), least memory, tensor parallel
// inside nodes, and with recomputation the same checkpointed per block.
// Each takes at every position the choice its ranking prefers, the step's
// cost breaking ties: incumbents that exist whenever such a plan fits.
//
//===----------------------------------------------------------------------===//

#include "weft/Synth/Search.h"

using namespace weft;
using namespace weft::synth;

namespace {
/// Replicated, Zero1, Zero2: data parallel, parameters stored that way
/// where offered (with gradient accumulation a whole-gradient or
/// reduce-scatter sync is cheaper than ZeRO-3's gathers every micro-batch).
enum class SeedMode {
  Replicated,
  Zero1,
  Zero2,
  MinStorage,
  LeastMemory,
  TensorParallel
};
/// `checkpointed` (spaces with recomputation): every op with a backward
/// pass is recomputed except the last before each cut, so a run spans one
/// block and only block inputs are kept (per-layer checkpointing).
std::optional<SearchOutcome> seedOf(SearchSpace &space, SeedMode mode,
                                    bool memoryPruning,
                                    bool checkpointed = false);
} // namespace

std::optional<SearchOutcome> weft::synth::dataParallelSeed(SearchSpace &space,
                                                           bool minMemory,
                                                           bool memoryPruning) {
  return seedOf(space, minMemory ? SeedMode::MinStorage : SeedMode::Replicated,
                memoryPruning);
}

std::optional<SearchOutcome> weft::synth::leastMemorySeed(SearchSpace &space,
                                                          bool memoryPruning) {
  return seedOf(space, SeedMode::LeastMemory, memoryPruning);
}

std::optional<SearchOutcome>
weft::synth::tensorParallelSeed(SearchSpace &space, bool memoryPruning) {
  if (llvm::all_of(llvm::drop_begin(space.axisSizes),
                   [](int64_t s) { return s <= 1; }))
    return std::nullopt;
  return seedOf(space, SeedMode::TensorParallel, memoryPruning);
}

std::vector<SearchOutcome> weft::synth::seedPlans(SearchSpace &space,
                                                  bool memoryPruning) {
  std::vector<SearchOutcome> out;
  for (auto seed : {dataParallelSeed(space, false, memoryPruning),
                    dataParallelSeed(space, true, memoryPruning),
                    leastMemorySeed(space, memoryPruning),
                    tensorParallelSeed(space, memoryPruning)})
    if (seed)
      out.push_back(std::move(*seed));
  if (space.recomputes())
    for (SeedMode mode : {SeedMode::Replicated, SeedMode::Zero1,
                          SeedMode::Zero2, SeedMode::MinStorage,
                          SeedMode::LeastMemory, SeedMode::TensorParallel})
      if (auto seed = seedOf(space, mode, memoryPruning, true))
        out.push_back(std::move(*seed));
  return out;
}

namespace {
/// What a choice does that the seeds rank, known before its step: operand
/// dims split on the batch (dim 0 of activations), parameters split, both
/// along the node axis or inside nodes, and the storage chosen for the
/// parameters used first (bytes, or how many miss the wanted strategy).
struct ChoiceShape {
  int batchSplits = 0, paramSplits = 0, nodeBatch = 0, localParams = 0;
  double storage = 0;
};

/// One seed, built position by position.
class SeedBuilder {
public:
  SeedBuilder(SearchSpace &space, SeedMode mode, bool memoryPruning,
              bool checkpointed);
  std::optional<SearchOutcome> run();

private:
  using Rank = std::tuple<int, int, double, double>;
  ChoiceShape shapeOf(unsigned p, const StepChoice &c);
  /// The rank's leading parts (all but the step's cost): a choice they
  /// rank below the best cannot win, since the cost only breaks ties.
  std::tuple<int, int, double> lead(const ChoiceShape &x) const;
  /// The rank of a choice whose step gives `r` and leaves `next`.
  Rank rank(const ChoiceShape &x, const StepResult &r,
            const MemoryTally &next) const;
  /// Takes the best choice at position p; false when none is possible.
  bool choose(unsigned p);

  SearchSpace &space;
  SeedMode mode;
  bool memoryPruning, checkpointed;
  unsigned reps, end;
  /// The uniform modes' storage: the strategy wanted for every parameter.
  std::optional<spmd::ParamStrategy> wanted;
  /// Per position: the last op of a checkpointed block (kept).
  std::vector<bool> lastOfBlock;
  StateKey key;
  SearchOutcome out;
  MemoryTally memory;
};

SeedBuilder::SeedBuilder(SearchSpace &space, SeedMode mode, bool memoryPruning,
                         bool checkpointed)
    : space(space), mode(mode), memoryPruning(memoryPruning),
      checkpointed(checkpointed), reps(space.numReps()),
      end(space.numPositions()), lastOfBlock(end + 1, false), memory(reps) {
  if (mode == SeedMode::Replicated)
    wanted = spmd::ParamStrategy::Replicated;
  else if (mode == SeedMode::Zero1)
    wanted = spmd::ParamStrategy::Zero1;
  else if (mode == SeedMode::Zero2)
    wanted = spmd::ParamStrategy::Zero2;
  if (checkpointed && space.recomputes())
    for (unsigned c : space.checkpointCuts())
      if (c > 0)
        lastOfBlock[c - 1] = true;
}

ChoiceShape SeedBuilder::shapeOf(unsigned p, const StepChoice &c) {
  const OpInfo &op = space.ops[p];
  const OpOption &option = op.options[c.option];
  ChoiceShape x;
  for (auto [i, v] : llvm::enumerate(op.operands)) {
    if (option.operands[i] == kNoDist)
      continue;
    const ValueInfo &info = space.values[v];
    spmd::DistAttr d = space.dist(option.operands[i]);
    for (auto [a, e] : llvm::enumerate(d.getAxes())) {
      if (space.axisSizes[a] <= 1)
        continue;
      bool activation = info.kind == ValueInfo::Kind::Op ||
                        info.kind == ValueInfo::Kind::Input;
      if (activation && e.isGather() && e.dim == 0) {
        ++x.batchSplits;
        x.nodeBatch += a == 0;
      }
      if (info.kind == ValueInfo::Kind::Parameter && !e.isIdentity()) {
        ++x.paramSplits;
        x.localParams += a > 0;
      }
    }
    if (info.defPos < 0 && info.uses.front() == p) {
      auto opts = space.storageOptions(v, option.operands[i]);
      if (c.storage[i] < opts.size()) {
        const StorageOption &so = opts[c.storage[i]];
        if (!wanted)
          x.storage +=
              *std::max_element(so.committed.begin(), so.committed.end());
        else
          x.storage += so.strategy == *wanted ||
                               so.strategy == spmd::ParamStrategy::Buffer
                           ? 0
                           : 1;
      }
    }
  }
  return x;
}

std::tuple<int, int, double> SeedBuilder::lead(const ChoiceShape &x) const {
  if (mode == SeedMode::TensorParallel)
    return {-x.nodeBatch, -x.localParams, 0};
  return {-x.batchSplits, x.paramSplits, x.storage};
}

SeedBuilder::Rank SeedBuilder::rank(const ChoiceShape &x, const StepResult &r,
                                    const MemoryTally &next) const {
  // Data parallel across nodes, parameters split inside them (as TP-DP),
  // the rest as cheap as the held distributions allow.
  if (mode == SeedMode::TensorParallel)
    return {-x.nodeBatch, -x.localParams, 0, r.cost};
  if (mode == SeedMode::LeastMemory) {
    // The fullest device after the step, as a share of its capacity.
    double fullest = 0;
    for (unsigned i = 0; i < reps; ++i)
      fullest = std::max(fullest, next.peak(i) / space.capacity()[i]);
    return {0, 0, fullest, r.cost};
  }
  return {-x.batchSplits, x.paramSplits, x.storage, r.cost};
}

bool SeedBuilder::choose(unsigned p) {
  const OpInfo &op = space.ops[p];
  std::optional<StepResult> best;
  StepChoice bestChoice;
  Rank bestRank;
  bool recomputeHere =
      checkpointed && space.recomputes() && op.grad && !lastOfBlock[p];
  space.forEachChoice(p, [&](const StepChoice &c) {
    if (checkpointed && c.recompute != recomputeHere)
      return;
    ChoiceShape x = shapeOf(p, c);
    // The leading parts are not known before the step in LeastMemory mode.
    if (best && mode != SeedMode::LeastMemory &&
        std::make_tuple(std::get<0>(bestRank), std::get<1>(bestRank),
                        std::get<2>(bestRank)) < lead(x))
      return;
    auto r = space.step(p, key, c);
    if (!r)
      return;
    MemoryTally next = memory.after(*r);
    if (memoryPruning && !space.mayFit(next, p + 1))
      return;
    Rank k = rank(x, *r, next);
    if (!best || k < bestRank) {
      best = std::move(r);
      bestChoice = c;
      bestRank = k;
    }
  });
  if (!best)
    return false;
  out.cost += best->cost;
  memory.add(*best);
  key = std::move(best->next);
  out.choices.push_back(bestChoice);
  return true;
}

std::optional<SearchOutcome> SeedBuilder::run() {
  for (unsigned p = 0; p < end; ++p)
    if (!choose(p))
      return std::nullopt;
  out.found = true;
  for (unsigned i = 0; i < reps; ++i)
    out.peakMemory.push_back(memory.peak(i));
  return out;
}

std::optional<SearchOutcome> seedOf(SearchSpace &space, SeedMode mode,
                                    bool memoryPruning, bool checkpointed) {
  return SeedBuilder(space, mode, memoryPruning, checkpointed).run();
}
} // namespace
