//===- SynthTest.cpp - A* against exhaustive enumeration, memo, memory ----===//

#include "../Eval/EvalTestUtil.h"
#include "BlockClasses.h"
#include "Graph/IR/GraphOps.h"
#include "SynthTestUtil.h"
#include "weft/Support/Error.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FormatVariadic.h"
#include <random>

using namespace weft;
using namespace weft::synth;
using namespace weft::test;
using namespace weft::synth::test;

namespace {

/// Exhaustive enumeration of every choice sequence with the space's own
/// transition function: the least cost of a plan that fits in memory.
struct BruteForce {
  SearchSpace &space;
  double best = std::numeric_limits<double>::infinity();
  uint64_t plans = 0;
  /// Enumerates positions up to here (the whole program by default).
  unsigned end = ~0u;

  void run(unsigned p, const StateKey &key, double g,
           const MemoryTally &memory) {
    if (p == std::min(end, space.numPositions())) {
      for (unsigned r = 0; r < space.numReps(); ++r)
        if (memory.peak(r) > space.capacity()[r])
          return;
      ++plans;
      best = std::min(best, g);
      return;
    }
    std::vector<StepChoice> choices;
    space.forEachChoice(p, [&](const StepChoice &c) { choices.push_back(c); });
    for (const StepChoice &c : choices) {
      auto r = space.step(p, key, c);
      if (!r)
        continue;
      run(p + 1, r->next, g + r->cost, memory.after(*r));
    }
  }
  double solve() {
    run(0, {}, 0, MemoryTally(space.numReps()));
    return best;
  }
};

TEST(SynthTest, AStarEqualsExhaustiveEnumeration) {
  std::mt19937 rng(7);
  ClusterSpec specs[] = {cluster(2, 1), cluster(3, 1), cluster(2, 2)};
  unsigned compared = 0;
  for (unsigned trial = 0; trial < 240; ++trial) {
    const ClusterSpec &spec = specs[trial % 3];
    unsigned ops = 2 + rng() % (trial % 3 == 2 ? 2 : 4);
    std::string text = randomGraph(rng, ops);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, spec);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    BruteForce brute{*space};
    double want = brute.solve();
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome a = searchAStar(*space, limits);
    limits.admissible = false;
    SearchOutcome z = searchAStar(*space, limits);
    // The memoised search (outer DP, dominance across distributions,
    // incumbent pruning) reaches the same optimum.
    limits.admissible = true;
    limits.memo = true;
    SearchOutcome m = search(*space, limits);
    ASSERT_EQ(a.found, std::isfinite(want)) << text;
    if (!a.found)
      continue;
    ++compared;
    EXPECT_NEAR(a.cost, want, 1e-12 * want) << text;
    EXPECT_NEAR(z.cost, want, 1e-12 * want) << text;
    ASSERT_TRUE(m.found) << text;
    EXPECT_NEAR(m.cost, want, 1e-12 * want) << text;
    auto memoReplayed = replay(*space, m.choices);
    ASSERT_TRUE(memoReplayed.has_value()) << text;
    EXPECT_NEAR(*memoReplayed, m.cost, 1e-12 * want) << text;
    EXPECT_EQ(a.gap, 0);
    EXPECT_FALSE(a.capped);
    // The choices replay to the cost found.
    auto replayed = replay(*space, a.choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, a.cost, 1e-12 * want);
  }
  EXPECT_GE(compared, 200u);
}

/// Walks the seed plans of `trials` random chains of 2–3 ops (on 3×1 and
/// 2×2 in turn): `visit(space, p, key, choice, text)` at every position,
/// before the seed's step there.
template <typename Visit>
void forEachSeedState(unsigned rngSeed, unsigned trials, Visit visit) {
  std::mt19937 rng(rngSeed);
  ClusterSpec specs[] = {cluster(3, 1), cluster(2, 2)};
  for (unsigned trial = 0; trial < trials; ++trial) {
    std::string text = randomGraph(rng, 2 + rng() % 2);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, specs[trial % 2]);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    SearchSpace &s = *parsed.space;
    for (const SearchOutcome &seed : seedPlans(s)) {
      StateKey key;
      for (unsigned p = 0; p < s.numPositions(); ++p) {
        visit(s, p, key, seed.choices[p], text);
        auto r = s.step(p, key, seed.choices[p]);
        ASSERT_TRUE(r.has_value()) << text;
        key = std::move(r->next);
      }
    }
  }
}

TEST(SynthTest, StateBoundIsAdmissibleAndSeesHoldings) {
  // Along every seed plan of random chains: at each position the state
  // bound is at most the exact least cost to go (enumeration from that
  // state), every step costs at least its op's floor, and on some states
  // the state bound exceeds the position's state-independent bound.
  unsigned checked = 0, tighter = 0;
  forEachSeedState(17, 40,
                   [&](SearchSpace &s, unsigned p, const StateKey &key,
                       const StepChoice &choice, const std::string &text) {
                     BruteForce rest{s};
                     rest.run(p, key, 0, MemoryTally(s.numReps()));
                     double h = s.heuristic(p, key);
                     EXPECT_LE(h, rest.best * (1 + 1e-9) + 1e-15) << text;
                     ++checked;
                     tighter += h > s.heuristic(p) * (1 + 1e-9);
                     auto r = s.step(p, key, choice);
                     ASSERT_TRUE(r.has_value()) << text;
                     EXPECT_GE(r->cost, s.opFloor(p) * (1 - 1e-9)) << text;
                   });
  EXPECT_GE(checked, 200u);
  // Measured: 167 of 487.
  EXPECT_GE(tighter, 50u);
}

TEST(SynthTest, EveryStepPaysItsRelayoutBounds) {
  // The tree bound charges each relayout relayBound(value, from, to, p): the
  // least over devices plus a share of the dearest device's excess beyond
  // the step's spread. Along random plans of random chains on clusters
  // whose slow nodes have slower links (so gradient syncs and relayouts
  // differ by device), every step costs at least the same choice from the
  // most favourable state (operands held as needed) plus the bounds of
  // the relayouts it does; some bounds exceed the least over devices.
  // (Ignoring the step's spread fails the check of the whole step; letting
  // every slot claim the whole excess fails the check of the claims.)
  std::mt19937 rng(31);
  ClusterSpec specs[] = {cluster(2, 2, 16, 35), cluster(2, 4, 16, 30),
                         cluster(2, 2, 16, 5)};
  unsigned steps = 0, relayouts = 0, excess = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    std::string text = randomGraph(rng, 3 + rng() % 4);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, specs[trial % 3]);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    SearchSpace &s = *parsed.space;
    StateKey key;
    for (unsigned p = 0; p < s.numPositions(); ++p) {
      // Half of the steps relay as many op results as they can (two at a
      // residual add: their claims on one step must not add up).
      std::vector<StepChoice> choices, most;
      size_t mostRelaid = 0;
      s.forEachChoice(p, [&](const StepChoice &c) {
        StepDetail d;
        if (!s.step(p, key, c, &d))
          return;
        choices.push_back(c);
        size_t relaid = llvm::count_if(d.relayouts, [&](auto &x) {
          return s.values[x.value].defPos >= 0;
        });
        if (relaid > mostRelaid)
          most.clear();
        if (relaid >= mostRelaid) {
          mostRelaid = relaid;
          most.push_back(c);
        }
      });
      ASSERT_FALSE(choices.empty()) << text;
      const std::vector<StepChoice> &from = rng() % 2 ? most : choices;
      const StepChoice &c = from[rng() % from.size()];
      StepDetail detail;
      auto r = s.step(p, key, c, &detail);
      // The same choice with every operand held as its option needs it.
      const OpInfo &op = s.ops[p];
      const OpOption &option = op.options[c.option];
      StateKey favourable;
      for (unsigned v : s.live(p)) {
        SearchSpace::HeldSet set;
        for (auto [i, w] : llvm::enumerate(op.operands))
          if (w == v && option.operands[i] != kNoDist &&
              !llvm::is_contained(set.dists, option.operands[i]))
            set.dists.push_back(option.operands[i]);
        if (set.dists.empty())
          set.dists.push_back(0);
        std::sort(set.dists.begin() + 1, set.dists.end());
        favourable.push_back(s.internHeld(set));
      }
      StepDetail nodeDetail;
      auto node = s.step(p, favourable, c, &nodeDetail);
      ASSERT_TRUE(node.has_value()) << text;
      // What the relayouts claim beyond their least over devices never
      // exceeds the one dearest excess the step pays (the bound's lemma).
      double charged = node->cost, claims = 0, dearest = 0;
      double spread = nodeDetail.commSeconds - nodeDetail.commLeast;
      for (const StepDetail::Relayout &x : detail.relayouts) {
        if (s.values[x.value].defPos < 0)
          continue; // Leaves are not charged by the bound.
        double bound = s.relayBound(x.value, x.from, x.to, p);
        const RepVector *each =
            s.relayoutSeconds(x.value, x.from, x.to, /*zero3=*/false);
        ASSERT_NE(each, nullptr) << text;
        auto [least, most] = std::minmax_element(each->begin(), each->end());
        excess += bound > *least * (1 + 1e-9);
        claims += bound - *least;
        dearest = std::max(dearest, *most - *least - spread);
        charged += bound;
        ++relayouts;
      }
      EXPECT_LE(claims, dearest * (1 + 1e-9) + 1e-15)
          << "position " << p << "\n"
          << text;
      EXPECT_LE(charged, r->cost * (1 + 1e-9) + 1e-15)
          << "position " << p << "\n"
          << text;
      ++steps;
      key = std::move(r->next);
    }
  }
  // Measured: 328 steps, 265 relayouts, 125 of them charged above their
  // least over devices.
  EXPECT_GE(steps, 200u);
  EXPECT_GE(relayouts, 100u) << "steps " << steps;
  EXPECT_GE(excess, 50u) << "relayouts " << relayouts;
}

TEST(SynthTest, BlockBoundIsAdmissibleAndSeesHoldings) {
  // The memoised search prunes a block with blockBound(p, b, key): along
  // every seed plan of random chains it is at most the least cost of
  // positions [p, b) from that state (enumeration), and on some states it
  // exceeds the op floors of [p, b) alone (the holdings are charged).
  unsigned checked = 0, tighter = 0;
  forEachSeedState(23, 80,
                   [&](SearchSpace &s, unsigned p, const StateKey &key,
                       const StepChoice &, const std::string &text) {
                     double floors = 0;
                     for (unsigned b = p + 1; b <= s.numPositions(); ++b) {
                       floors += s.opFloor(b - 1);
                       BruteForce block{s};
                       block.end = b;
                       block.run(p, key, 0, MemoryTally(s.numReps()));
                       double bound = s.blockBound(p, b, key);
                       EXPECT_LE(bound, block.best * (1 + 1e-9) + 1e-15)
                           << text;
                       ++checked;
                       tighter += bound > floors * (1 + 1e-9);
                     }
                   });
  EXPECT_GE(checked, 1000u) << "tighter " << tighter;
  // Measured: 16 of 2388 (random chains rarely keep a value live across a
  // relayout).
  EXPECT_GE(tighter, 5u) << "checked " << checked;
}

TEST(SynthTest, MemoEqualsAStarOnLongerChains) {
  // Longer chains than enumeration allows: the memoised search (dominance
  // across distributions, incumbent pruning) against the plain A*.
  std::mt19937 rng(11);
  ClusterSpec specs[] = {cluster(3, 1), cluster(2, 2)};
  unsigned compared = 0, memoised = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    const ClusterSpec &spec = specs[trial % 2];
    std::string text = randomGraph(rng, 6 + rng() % 4);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, spec);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome a = search(*space, limits);
    limits.memo = true;
    SearchOutcome m = search(*space, limits);
    ASSERT_EQ(a.found, m.found) << text;
    if (!a.found)
      continue;
    ASSERT_FALSE(a.capped);
    ++compared;
    memoised += m.memoised;
    EXPECT_NEAR(m.cost, a.cost, 1e-12 * a.cost) << text;
  }
  EXPECT_GE(compared, 50u);
  EXPECT_GE(memoised, 50u);
}

/// A module taking %x : tensor<8x16xf32> with `params` and `body`, whose
/// loss is the sum of `last`.
std::string residualModule(const std::string &params, const std::string &body,
                           const std::string &last) {
  return "module {\n  func.func @main(%x: tensor<8x16xf32> {graph.input = "
         "\"x\"}) -> tensor<f32> {\n" +
         params + body + "    %l = graph.reduce_sum " + last +
         " {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x16xf32> -> "
         "tensor<f32>\n    return %l : tensor<f32>\n  }\n}\n";
}

/// Four identical residual MLP blocks.
std::string repeatedBlocks(unsigned blocks) {
  std::string params, body;
  std::string cur = "%x";
  for (unsigned i = 0; i < blocks; ++i) {
    params += llvm::formatv(
        "    %w{0} = graph.parameter \"w{0}\" : tensor<16x32xf32>\n"
        "    %u{0} = graph.parameter \"u{0}\" : tensor<32x16xf32>\n"
        "    %c{0} = graph.parameter \"c{0}\" : tensor<16xf32>\n",
        i);
    body += llvm::formatv(
        "    %m{0} = graph.matmul {1}, %w{0} : (tensor<8x16xf32>, "
        "tensor<16x32xf32>) -> tensor<8x32xf32>\n"
        "    %r{0} = graph.relu %m{0} : tensor<8x32xf32>\n"
        "    %n{0} = graph.matmul %r{0}, %u{0} : (tensor<8x32xf32>, "
        "tensor<32x16xf32>) -> tensor<8x16xf32>\n"
        "    %a{0} = graph.add %n{0}, %c{0} : (tensor<8x16xf32>, "
        "tensor<16xf32>) -> tensor<8x16xf32>\n"
        "    %h{0} = graph.add {1}, %a{0} : (tensor<8x16xf32>, "
        "tensor<8x16xf32>) -> tensor<8x16xf32>\n",
        i, cur);
    cur = "%h" + std::to_string(i);
  }
  return residualModule(params, body, cur);
}

TEST(SynthTest, MemoMatchesPlainSearch) {
  for (unsigned devices : {1u, 2u}) {
    ClusterSpec spec = cluster(2, devices);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(4), spec);
    ASSERT_TRUE(parsed.space) << parsed.error;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome plain = search(*space, limits);
    limits.memo = true;
    SearchOutcome memo = search(*space, limits);
    ASSERT_TRUE(plain.found && memo.found);
    EXPECT_TRUE(memo.memoised);
    EXPECT_NEAR(memo.cost, plain.cost, 1e-12 * plain.cost);
    auto replayed = replay(*space, memo.choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, memo.cost, 1e-12 * plain.cost);
  }
}

/// Residual blocks with three parallel matmuls summed: four live values
/// inside a block, so one block solve takes many expansions.
std::string wideBlocks(unsigned blocks) {
  std::string params, body;
  std::string cur = "%x";
  const char *t = "tensor<8x16xf32>";
  for (unsigned i = 0; i < blocks; ++i) {
    for (unsigned j = 0; j < 3; ++j) {
      params += llvm::formatv("    %w{0}_{1} = graph.parameter \"w{0}_{1}\" : "
                              "tensor<16x16xf32>\n",
                              i, j);
      body += llvm::formatv("    %a{0}_{1} = graph.matmul {2}, %w{0}_{1} : "
                            "({3}, tensor<16x16xf32>) -> {3}\n",
                            i, j, cur, t);
    }
    body += llvm::formatv(
        "    %s{0} = graph.add %a{0}_0, %a{0}_1 : ({1}, {1}) -> {1}\n"
        "    %t{0} = graph.add %s{0}, %a{0}_2 : ({1}, {1}) -> {1}\n"
        "    %r{0} = graph.relu %t{0} : {1}\n"
        "    %h{0} = graph.add {2}, %r{0} : ({1}, {1}) -> {1}\n",
        i, t, cur);
    cur = "%h" + std::to_string(i);
  }
  return residualModule(params, body, cur);
}

TEST(SynthTest, MemoGivesUpWhenOneSolveOutrunsItsShare) {
  // With stopWhenHopeless the memoised search stops as soon as one block
  // solve takes more than twice its share of the expansions left (shared
  // by the entries its cut still has to solve); the plain A* takes over
  // and the plan stays a plan of the space at its replayed cost.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, wideBlocks(3), spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = true;
  // A generous budget: the memo finishes with the rule as without it.
  limits.maxExpansions = 8000000;
  limits.stopWhenHopeless = true;
  SearchOutcome roomy = search(space, limits);
  ASSERT_TRUE(roomy.found);
  EXPECT_TRUE(roomy.memoised);
  // A budget whose eighth the memo cannot finish in: with the rule it
  // stops before that eighth is spent; without it (the same memo budget:
  // half of a quarter) it runs to the end of its budget.
  uint64_t cap = 8 * roomy.memoExpansions / 3;
  limits.maxExpansions = cap;
  SearchOutcome with = search(space, limits);
  limits.maxExpansions = cap / 4;
  limits.stopWhenHopeless = false;
  SearchOutcome without = search(space, limits);
  EXPECT_FALSE(without.memoised);
  EXPECT_LT(with.memoExpansions, cap / 8);
  EXPECT_LT(with.memoExpansions, without.memoExpansions);
  ASSERT_TRUE(without.found && with.found);
  EXPECT_FALSE(with.memoised);
  for (const SearchOutcome *o : {&roomy, &with}) {
    auto replayed = replay(space, o->choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, o->cost, 1e-12 * o->cost);
  }
  EXPECT_GE(with.cost, roomy.cost * (1 - 1e-12));
}

TEST(SynthTest, PlainFirstSkipsTheMemoWhenTheAStarCloses) {
  // plainFirst (the default budget): the plain A* tries first on the memo's
  // eighth of the expansions. On 24 blocks on 2 x 2 the admissible A*
  // closes there, so no block is solved and the cost is the memo's; uniform
  // cost stops as hopeless there, and the memo then finishes the search.
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(24), cluster(2, 2));
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = true;
  limits.maxExpansions = 400000;
  limits.stopWhenHopeless = true;
  SearchOutcome memo = search(space, limits);
  ASSERT_TRUE(memo.memoised);
  limits.plainFirst = true;
  SearchOutcome plain = search(space, limits);
  EXPECT_FALSE(plain.capped);
  EXPECT_FALSE(plain.memoised);
  EXPECT_EQ(plain.memoExpansions, 0u);
  EXPECT_NEAR(plain.cost, memo.cost, 1e-12 * memo.cost);
  limits.admissible = false;
  SearchOutcome uniform = search(space, limits);
  EXPECT_TRUE(uniform.memoised);
  EXPECT_GT(uniform.memoExpansions, 0u);
  EXPECT_GT(uniform.expansions, uniform.memoExpansions);
  EXPECT_NEAR(uniform.cost, memo.cost, 1e-12 * memo.cost);
}

/// One 4096 x 4096 weight: 64 MiB of fp32, 256 MiB with Adam's state and
/// gradient (16 B per parameter).
const char *kBigWeight = R"(module {
  func.func @main(%x: tensor<8x4096xf32> {graph.input = "x"}) -> tensor<f32> {
    %w = graph.parameter "w" : tensor<4096x4096xf32>
    %m = graph.matmul %x, %w : (tensor<8x4096xf32>, tensor<4096x4096xf32>) -> tensor<8x4096xf32>
    %l = graph.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x4096xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})";

/// A softmax over 100 classes of a value that carries a gradient.
const char *kSoftmax = R"(module {
  func.func @main(%x: tensor<8x100xf32> {graph.input = "x"}) -> tensor<f32> {
    %w = graph.parameter "w" : tensor<8x100xf32>
    %z = graph.add %x, %w : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
    %s = graph.softmax %z {axis = 1 : i64} : tensor<8x100xf32>
    %l = graph.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x100xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})";

TEST(SynthTest, RecipeAllReducesAreCommunication) {
  // Two nodes of one device: a softmax split along its classes all-reduces
  // the row maximum and row sum (8 fp32 values, 32 B) and, backward, Σ dy·y:
  // three 2-device ring all-reduces of 2·(10 us + 16 B / 1e9 B/s) each, as
  // the evaluator prices them (EvaluatorTest.RecipeAllReducesArePriced).
  ClusterSpec spec = cluster(2, 1);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kSoftmax, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  unsigned splitClasses = 0;
  for (const OpInfo &op : s.ops) {
    if (!llvm::isa<graph::SoftmaxOp>(op.op))
      continue;
    for (const OpOption &o : op.options) {
      auto axes = s.dist(o.operands[0]).getAxes();
      bool classes = axes[0].isGather() && axes[0].dim == 1;
      splitClasses += classes;
      for (double t : o.recipeComm)
        EXPECT_NEAR(t, classes ? 3 * 2.0032e-5 : 0, 1e-15);
    }
  }
  EXPECT_EQ(splitClasses, 1u);
}

TEST(SynthTest, MemoryPruningKeepsTheOnlyFeasiblePlan) {
  // 0.25 GB per device (0.225 after the reserve): replication (0.27 GB) does
  // not fit; a weight split 2 : 1 over the devices (0.18 GB on the fast one)
  // does.
  ClusterSpec spec = cluster(2, 1, 0.25);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  BruteForce brute{*space};
  double want = brute.solve();
  ASSERT_TRUE(std::isfinite(want));
  for (bool memo : {false, true}) {
    SearchLimits limits;
    limits.memo = memo;
    SearchOutcome a = search(*space, limits);
    ASSERT_TRUE(a.found);
    EXPECT_NEAR(a.cost, want, 1e-12 * want);
    for (unsigned r = 0; r < space->numReps(); ++r)
      EXPECT_LE(a.peakMemory[r], space->capacity()[r]);
  }
  // Without memory the search prefers something that does not fit here.
  SearchLimits relaxed;
  relaxed.memoryPruning = false;
  SearchOutcome free = search(*space, relaxed);
  ASSERT_TRUE(free.found);
  EXPECT_LE(free.cost, want);
}

/// The least cost over single-position changes of `plan` (the suffix kept),
/// by brute force with replay(); infinity when none is possible.
double bestSingleChange(SearchSpace &space, const SearchOutcome &plan) {
  double best = std::numeric_limits<double>::infinity();
  for (unsigned p = 0; p < space.numPositions(); ++p)
    space.forEachChoice(p, [&](const StepChoice &c) {
      if (c == plan.choices[p])
        return;
      std::vector<StepChoice> changed = plan.choices;
      changed[p] = c;
      RepVector peak;
      auto cost = replay(space, changed, nullptr, &peak);
      if (!cost)
        return;
      for (unsigned r = 0; r < space.numReps(); ++r)
        if (peak[r] > space.capacity()[r])
          return;
      best = std::min(best, *cost);
    });
  return best;
}

TEST(SynthTest, ImprovePlanReachesALocalOptimumWithinMemory) {
  // Every seed of random chains, improved: never worse, never below the
  // optimum, replays to its cost within memory, and no single change
  // (brute force) is cheaper.
  std::mt19937 rng(13);
  ClusterSpec specs[] = {cluster(3, 1), cluster(2, 2)};
  unsigned checked = 0, improved = 0;
  for (unsigned trial = 0; trial < 40; ++trial) {
    std::string text = randomGraph(rng, 4 + rng() % 4);
    mlir::MLIRContext ctx;
    ParsedSpace parsed = parseSpace(ctx, text, specs[trial % 2]);
    ASSERT_TRUE(parsed.space) << parsed.error << text;
    std::unique_ptr<SearchSpace> &space = parsed.space;
    SearchSpace &s = *space;
    SearchLimits limits;
    limits.memo = false;
    SearchOutcome optimum = searchAStar(s, limits);
    ASSERT_FALSE(optimum.capped);
    for (SearchOutcome seed : seedPlans(s)) {
      double before = seed.cost;
      EXPECT_GT(improvePlan(s, seed), 0u);
      ++checked;
      improved += seed.cost < before * (1 - 1e-9);
      EXPECT_LE(seed.cost, before) << text;
      EXPECT_GE(seed.cost, optimum.cost * (1 - 1e-12)) << text;
      RepVector peak;
      auto replayed = replay(s, seed.choices, nullptr, &peak);
      ASSERT_TRUE(replayed.has_value()) << text;
      EXPECT_NEAR(*replayed, seed.cost, 1e-12 * before) << text;
      for (unsigned r = 0; r < s.numReps(); ++r) {
        EXPECT_LE(peak[r], s.capacity()[r]) << text;
        EXPECT_DOUBLE_EQ(seed.peakMemory[r], peak[r]) << text;
      }
      EXPECT_GE(bestSingleChange(s, seed), seed.cost * (1 - 1e-9)) << text;
    }
  }
  EXPECT_GE(checked, 100u);
  // The seeds are often not local optima, so the test sees changes.
  EXPECT_GE(improved, 20u);
}

TEST(SynthTest, ImprovePlanStaysWithinMemory) {
  // The big weight fits only split (MemoryPruningKeepsTheOnlyFeasiblePlan):
  // from the least-memory seed the improvement stays within memory, between
  // the optimum and the seed; a plan over memory is left as it is.
  ClusterSpec spec = cluster(2, 1, 0.25);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  BruteForce brute{s};
  double want = brute.solve();
  auto seed = leastMemorySeed(s);
  ASSERT_TRUE(seed.has_value());
  double before = seed->cost;
  improvePlan(s, *seed);
  EXPECT_GE(seed->cost, want * (1 - 1e-12));
  EXPECT_LE(seed->cost, before);
  for (unsigned r = 0; r < s.numReps(); ++r)
    EXPECT_LE(seed->peakMemory[r], s.capacity()[r]);
  // The replicated data-parallel plan does not fit: nothing to improve
  // within memory, though ignoring memory a change is found or not.
  auto over = dataParallelSeed(s, /*minMemory=*/false, /*memoryPruning=*/false);
  ASSERT_TRUE(over.has_value());
  bool overMemory = false;
  for (unsigned r = 0; r < s.numReps(); ++r)
    overMemory |= over->peakMemory[r] > s.capacity()[r];
  ASSERT_TRUE(overMemory);
  SearchOutcome kept = *over;
  improvePlan(s, kept);
  EXPECT_EQ(kept.choices, over->choices);
  EXPECT_EQ(kept.cost, over->cost);
}

TEST(SynthTest, RepeatedBlocksAreFoundAndImprovedTogether) {
  // Six identical residual blocks: the cuts give one class of at least
  // four blocks of one length, whose ops agree offset by offset; every seed,
  // improved (joint sweeps over the first block, then every position), is
  // no worse, replays to its cost and no single change is cheaper.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(6), spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &s = *parsed.space;
  std::vector<RepeatedBlocks> classes = synth::repeatedBlocks(s);
  ASSERT_FALSE(classes.empty());
  const RepeatedBlocks *most = &classes.front();
  for (const RepeatedBlocks &c : classes)
    if (c.starts.size() > most->starts.size())
      most = &c;
  EXPECT_GE(most->starts.size(), 4u);
  for (size_t k = 1; k < most->starts.size(); ++k) {
    EXPECT_GE(most->starts[k], most->starts[k - 1] + most->length);
    for (unsigned o = 0; o < most->length; ++o)
      EXPECT_EQ(s.ops[most->starts[k] + o].op->getName(),
                s.ops[most->starts[0] + o].op->getName());
  }
  unsigned improved = 0;
  for (SearchOutcome seed : seedPlans(s)) {
    double before = seed.cost;
    improvePlan(s, seed);
    improved += seed.cost < before * (1 - 1e-9);
    EXPECT_LE(seed.cost, before);
    auto replayed = replay(s, seed.choices);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_NEAR(*replayed, seed.cost, 1e-12 * before);
    EXPECT_GE(bestSingleChange(s, seed), seed.cost * (1 - 1e-9));
  }
  EXPECT_GE(improved, 1u);
}

TEST(SynthTest, OpsAlikeShareOptionsAndOthersDoNot) {
  // Two matmuls of one shape (%a, %b) take one list of options; the third
  // (%c, same name and attributes, four times the FLOPs) has its own: were
  // types left out of what makes ops alike, it would copy %a's compute.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  ParsedSpace parsed = parseSpace(ctx, R"(module {
  func.func @main(%x: tensor<8x16xf32> {graph.input = "x"}) -> tensor<f32> {
    %w1 = graph.parameter "w1" : tensor<16x32xf32>
    %w2 = graph.parameter "w2" : tensor<16x32xf32>
    %w3 = graph.parameter "w3" : tensor<32x64xf32>
    %a = graph.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %b = graph.matmul %x, %w2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %s = graph.add %a, %b : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %c = graph.matmul %s, %w3 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
    %l = graph.reduce_sum %c {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x64xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
})",
                                  spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &s = *parsed.space;
  std::vector<const OpInfo *> matmuls;
  for (const OpInfo &info : s.ops)
    if (llvm::isa<graph::MatMulOp>(info.op))
      matmuls.push_back(&info);
  ASSERT_EQ(matmuls.size(), 3u);
  const OpInfo &a = *matmuls[0], &b = *matmuls[1], &c = *matmuls[2];
  ASSERT_EQ(a.options.size(), b.options.size());
  for (auto [x, y] : llvm::zip(a.options, b.options)) {
    EXPECT_EQ(x.operands, y.operands);
    EXPECT_EQ(x.results, y.results);
    EXPECT_EQ(x.compute, y.compute);
    EXPECT_EQ(x.kept, y.kept);
  }
  // The replicated option computes the whole matmul on every device.
  auto replicated = [&](const OpInfo &info) {
    for (const OpOption &o : info.options)
      if (llvm::all_of(o.perAxis, [&](uint16_t v) {
            return llvm::StringRef(info.variantNames[v]).endswith(".replicate");
          }))
        return o.compute;
    return std::vector<double>();
  };
  std::vector<double> ra = replicated(a), rc = replicated(c);
  ASSERT_FALSE(ra.empty());
  ASSERT_EQ(ra.size(), rc.size());
  for (auto [x, y] : llvm::zip(ra, rc))
    EXPECT_GT(y, 2 * x);
}

TEST(SynthTest, TensorParallelSeedSplitsParametersInsideNodes) {
  // Two nodes of two devices: the seed keeps the batch split across nodes
  // and splits the weight along the local axis; its choices replay to its
  // cost. On one device per node there is no local axis and no such seed.
  mlir::MLIRContext ctx;
  ClusterSpec spec = cluster(2, 2);
  ParsedSpace parsed = parseSpace(ctx, kBigWeight, spec);
  ASSERT_TRUE(parsed.space) << parsed.error;
  std::unique_ptr<SearchSpace> &space = parsed.space;
  SearchSpace &s = *space;
  auto seed = tensorParallelSeed(s);
  ASSERT_TRUE(seed.has_value());
  auto cost = replay(s, seed->choices);
  ASSERT_TRUE(cost.has_value());
  EXPECT_NEAR(*cost, seed->cost, 1e-12 * seed->cost);
  bool weightSplitLocally = false, batchSplitAcrossNodes = false;
  for (auto [p, choice] : llvm::enumerate(seed->choices)) {
    const OpInfo &op = s.ops[p];
    const OpOption &o = op.options[choice.option];
    for (auto [i, v] : llvm::enumerate(op.operands)) {
      if (o.operands[i] == kNoDist)
        continue;
      auto axes = s.dist(o.operands[i]).getAxes();
      if (s.values[v].kind == ValueInfo::Kind::Parameter)
        weightSplitLocally |= !axes[1].isIdentity();
      if (s.values[v].kind == ValueInfo::Kind::Input)
        batchSplitAcrossNodes |= axes[0].isGather() && axes[0].dim == 0;
    }
  }
  EXPECT_TRUE(weightSplitLocally);
  EXPECT_TRUE(batchSplitAcrossNodes);
  EXPECT_EQ(seedPlans(s).size(), 4u);

  ClusterSpec flat = cluster(2, 1);
  auto flatSpace = SearchSpace::build(*parsed.graph, flat, {});
  ASSERT_TRUE(bool(flatSpace));
  EXPECT_FALSE(tensorParallelSeed(**flatSpace).has_value());
}

TEST(SynthTest, NoPlanFitsNamesTheDevice) {
  ClusterSpec spec = cluster(2, 1, 0.05);
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, kBigWeight);
  ASSERT_TRUE(graph);
  SynthOptions options;
  auto result = synthesize(*graph, spec, options);
  ASSERT_FALSE(bool(result));
  std::string message;
  int code = 0;
  llvm::handleAllErrors(result.takeError(), [&](const WeftError &e) {
    message = e.getMessage();
    code = e.getCode();
  });
  EXPECT_EQ(code, ExitInfeasible);
  EXPECT_NE(message.find("lacks"), std::string::npos) << message;
}

TEST(SynthTest, DefaultBudgetReturnsAPlan) {
  // 24 blocks on a 2 x 2 mesh: far beyond exhaustive search (the space has
  // about 10^40 choice sequences). Without limits synthesize() applies its
  // default budget and still returns a plan (capped or not) that replays.
  ClusterSpec spec = cluster(2, 2);
  mlir::MLIRContext ctx;
  auto graph = parsePlan(ctx, repeatedBlocks(24));
  ASSERT_TRUE(graph);
  SynthOptions options;
  options.fixedRatios = true;
  options.memo = false;
  auto result = synthesize(*graph, spec, options);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(result->plan);
  EXPECT_LE(result->stats.expansions, kDefaultMaxExpansions);
  EXPECT_GE(result->stats.gap, 0);
  EXPECT_LT(result->stats.gap, 1);
  // A budget of a few expansions still yields the seed's plan, capped.
  auto space = SearchSpace::build(*graph, spec, {});
  ASSERT_TRUE(bool(space));
  SearchLimits limits;
  limits.memo = false;
  limits.maxExpansions = 3;
  SearchOutcome tiny = search(**space, limits);
  ASSERT_TRUE(tiny.found);
  EXPECT_TRUE(tiny.capped);
  auto replayed = replay(**space, tiny.choices);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_NEAR(*replayed, tiny.cost, 1e-9 * tiny.cost);
  // The data-parallel seed exists on its own.
  EXPECT_TRUE(dataParallelSeed(**space, false).has_value());
}

TEST(SynthTest, DeterministicAndBuildsAVerifiedPlan) {
  ClusterSpec spec = cluster(2, 2);
  std::vector<std::string> printed;
  double cost = -1;
  for (int run = 0; run < 2; ++run) {
    mlir::MLIRContext ctx;
    auto graph = parsePlan(ctx, repeatedBlocks(2));
    ASSERT_TRUE(graph);
    SynthOptions options;
    options.fixedRatios = true;
    auto result = synthesize(*graph, spec, options);
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    ASSERT_TRUE(result->plan);
    std::string s;
    llvm::raw_string_ostream os(s);
    result->plan->print(os);
    printed.push_back(os.str());
    if (cost >= 0)
      EXPECT_EQ(result->searchStepSeconds, cost);
    cost = result->searchStepSeconds;
    EXPECT_GT(result->evaluatedStepSeconds, 0);
    EXPECT_EQ(result->explain.size(), 11u);
  }
  EXPECT_EQ(printed[0], printed[1]);
}

} // namespace

TEST(SynthTest, HopelessSearchStopsEarlyAndClosableOneFinishes) {
  // stopWhenHopeless stops the A* once its bound, rising four times as fast
  // as over its last doubling, would not reach the incumbent within the
  // cap; a search whose bound closes is left to finish. Uniform cost on 6
  // blocks on a 2 x 2 mesh closes in about 20,000 expansions (past the
  // probes at 2,048, 4,096, 8,192 and 16,384) of a cap of 30,000, close
  // enough that the rule without its margin (the rise once, not four
  // times over) would stop it; on 24 blocks it would take about 133,000.
  mlir::MLIRContext ctx;
  {
    ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(6), cluster(2, 2));
    ASSERT_TRUE(parsed.space) << parsed.error;
    SearchLimits limits;
    limits.memo = false;
    limits.admissible = false;
    limits.maxExpansions = 30000;
    SearchOutcome optimum = search(*parsed.space, limits);
    ASSERT_FALSE(optimum.capped);
    ASSERT_GT(optimum.expansions, 16384u);
    limits.stopWhenHopeless = true;
    SearchOutcome closed = search(*parsed.space, limits);
    EXPECT_FALSE(closed.hopeless);
    EXPECT_FALSE(closed.capped);
    EXPECT_EQ(closed.expansions, optimum.expansions);
    EXPECT_NEAR(closed.cost, optimum.cost, 1e-12 * optimum.cost);
  }
  ParsedSpace parsed = parseSpace(ctx, repeatedBlocks(24), cluster(2, 2));
  ASSERT_TRUE(parsed.space) << parsed.error;
  SearchSpace &space = *parsed.space;
  SearchLimits limits;
  limits.memo = false;
  limits.maxExpansions = 400000;
  SearchOutcome optimum = search(space, limits);
  ASSERT_FALSE(optimum.capped);

  // Uniform cost with a cap of 40,000: its bound rises about 1e-8 s per
  // expansion, far short of the 1.4e-3 s plan by the cap.
  limits.admissible = false;
  limits.maxExpansions = 40000;
  limits.stopWhenHopeless = false;
  SearchOutcome capped = search(space, limits);
  EXPECT_TRUE(capped.capped);
  EXPECT_FALSE(capped.hopeless);
  limits.stopWhenHopeless = true;
  SearchOutcome stopped = search(space, limits);
  EXPECT_TRUE(stopped.hopeless);
  EXPECT_TRUE(stopped.capped);
  EXPECT_LT(stopped.expansions, capped.expansions);
  ASSERT_TRUE(stopped.found);
  EXPECT_GE(stopped.cost, optimum.cost * (1 - 1e-12));
  EXPECT_GT(stopped.gap, 0);
  auto replayed = replay(space, stopped.choices);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_NEAR(*replayed, stopped.cost, 1e-9 * stopped.cost);
}
