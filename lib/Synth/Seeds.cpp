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
std::optional<SearchOutcome> seedOf(SearchSpace &space, SeedMode mode,
                                    bool memoryPruning, bool checkpointed) {
  unsigned reps = space.numReps(), end = space.numPositions();
  StateKey key;
  SearchOutcome out;
  MemoryTally memory(reps);
  // The uniform modes' storage: the strategy wanted for every parameter.
  std::optional<spmd::ParamStrategy> wanted;
  if (mode == SeedMode::Replicated)
    wanted = spmd::ParamStrategy::Replicated;
  else if (mode == SeedMode::Zero1)
    wanted = spmd::ParamStrategy::Zero1;
  else if (mode == SeedMode::Zero2)
    wanted = spmd::ParamStrategy::Zero2;
  std::vector<bool> lastOfBlock(end + 1, false);
  if (checkpointed && space.recomputes())
    for (unsigned c : space.checkpointCuts())
      if (c > 0)
        lastOfBlock[c - 1] = true;
  for (unsigned p = 0; p < end; ++p) {
    const OpInfo &op = space.ops[p];
    std::optional<StepResult> best;
    StepChoice bestChoice;
    std::tuple<int, int, double, double> bestKey;
    bool recomputeHere =
        checkpointed && space.recomputes() && op.grad && !lastOfBlock[p];
    space.forEachChoice(p, [&](const StepChoice &c) {
      if (checkpointed && c.recompute != recomputeHere)
        return;
      const OpOption &option = op.options[c.option];
      int batchSplits = 0, paramSplits = 0, nodeBatch = 0, localParams = 0;
      double storage = 0;
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
            ++batchSplits;
            nodeBatch += a == 0;
          }
          if (info.kind == ValueInfo::Kind::Parameter && !e.isIdentity()) {
            ++paramSplits;
            localParams += a > 0;
          }
        }
        if (info.defPos < 0 && info.uses.front() == p) {
          auto opts = space.storageOptions(v, option.operands[i]);
          if (c.storage[i] < opts.size()) {
            const StorageOption &so = opts[c.storage[i]];
            if (!wanted)
              storage +=
                  *std::max_element(so.committed.begin(), so.committed.end());
            else
              storage += so.strategy == *wanted ||
                                 so.strategy == spmd::ParamStrategy::Buffer
                             ? 0
                             : 1;
          }
        }
      }
      // The key's leading parts are known before the step (except in
      // LeastMemory mode): a choice they rank below the best cannot win,
      // since the step's cost only breaks ties.
      std::tuple<int, int, double> lead{-batchSplits, paramSplits, storage};
      if (mode == SeedMode::TensorParallel)
        lead = {-nodeBatch, -localParams, 0};
      if (best && mode != SeedMode::LeastMemory &&
          std::make_tuple(std::get<0>(bestKey), std::get<1>(bestKey),
                          std::get<2>(bestKey)) < lead)
        return;
      auto r = space.step(p, key, c);
      if (!r)
        return;
      MemoryTally next = memory.after(*r);
      if (memoryPruning && !space.mayFit(next, p + 1))
        return;
      std::tuple<int, int, double, double> k{-batchSplits, paramSplits, storage,
                                             r->cost};
      // Data parallel across nodes, parameters split inside them (as
      // TP-DP), the rest as cheap as the held distributions allow.
      if (mode == SeedMode::TensorParallel)
        k = {-nodeBatch, -localParams, 0, r->cost};
      if (mode == SeedMode::LeastMemory) {
        // The fullest device after the step, as a share of its capacity.
        double fullest = 0;
        for (unsigned i = 0; i < reps; ++i)
          fullest = std::max(fullest, next.peak(i) / space.capacity()[i]);
        k = {0, 0, fullest, r->cost};
      }
      if (!best || k < bestKey) {
        best = std::move(r);
        bestChoice = c;
        bestKey = k;
      }
    });
    if (!best)
      return std::nullopt;
    out.cost += best->cost;
    memory.add(*best);
    key = std::move(best->next);
    out.choices.push_back(bestChoice);
  }
  out.found = true;
  for (unsigned i = 0; i < reps; ++i)
    out.peakMemory.push_back(memory.peak(i));
  return out;
}

} // namespace
