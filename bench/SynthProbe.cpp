//===- SynthProbe.cpp - The search's figures for one model ----------------===//
//
// A measuring tool, not a test (built as build/bin/weft-synth-probe, never
// run by ctest; GoogleTest is only its harness): prints the search's figures
// for a model and a cluster given in the environment:
//   WEFT_SYNTH_MODEL=graph.mlir WEFT_SYNTH_CLUSTER=spec.yaml
//   [WEFT_SYNTH_HEURISTIC=zero] [WEFT_SYNTH_MEMO=0]
//   [WEFT_SYNTH_MAX_EXPANSIONS=N] [WEFT_SYNTH_TIME_LIMIT=S]
//   build/bin/weft-synth-probe --gtest_filter=SynthBench.Run
// (also CompareSteps, Seeds, Gap; SynthBench.Slack with WEFT_SYNTH_SLACK=1
// prints where the lower bound is loose along the best improved seed).
//
//===----------------------------------------------------------------------===//

#include "Eval/EvalTestUtil.h"
#include "weft/Synth/Search.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cstdlib>
#include <map>

using namespace weft;

namespace {
/// The model (graph program) and cluster named by WEFT_SYNTH_MODEL and
/// WEFT_SYNTH_CLUSTER, for a bench that runs only when `flag` (null: none)
/// is set too.
struct BenchInputs {
  /// `withSpace`: also build the search space (at speed ratios).
  explicit BenchInputs(const char *flag, bool withSpace = false) {
    const char *model = std::getenv("WEFT_SYNTH_MODEL");
    const char *clusterPath = std::getenv("WEFT_SYNTH_CLUSTER");
    if (!model || !clusterPath || (flag && !std::getenv(flag))) {
      skip = std::string("set WEFT_SYNTH_MODEL, WEFT_SYNTH_CLUSTER") +
             (flag ? std::string(" and ") + flag : "");
      return;
    }
    auto loaded = loadClusterSpec(clusterPath);
    if (!loaded) {
      error = llvm::toString(loaded.takeError());
      return;
    }
    spec = std::move(*loaded);
    test::loadDialects(ctx);
    graph = mlir::parseSourceFile<mlir::ModuleOp>(model, &ctx);
    if (!graph) {
      error = std::string("cannot parse ") + model;
      return;
    }
    if (!withSpace)
      return;
    auto built = synth::SearchSpace::build(*graph, *spec, {});
    if (built)
      space = std::move(*built);
    else
      error = llvm::toString(built.takeError());
  }
  std::optional<ClusterSpec> spec;
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> graph;
  std::unique_ptr<synth::SearchSpace> space;
  /// Why the bench does not run, and a load error ("" when none).
  std::string skip, error;
};
} // namespace

TEST(SynthBench, Run) {
  BenchInputs in(nullptr);
  if (!in.skip.empty())
    GTEST_SKIP() << in.skip;
  ASSERT_TRUE(in.graph) << in.error;
  ClusterSpec &spec = *in.spec;
  mlir::ModuleOp graph = *in.graph;
  SynthOptions options;
  options.fixedRatios = true;
  if (const char *h = std::getenv("WEFT_SYNTH_HEURISTIC"))
    if (llvm::StringRef(h) == "zero")
      options.heuristic = SynthOptions::Heuristic::Zero;
  if (const char *m = std::getenv("WEFT_SYNTH_MEMO"))
    options.memo = llvm::StringRef(m) != "0";
  if (const char *n = std::getenv("WEFT_SYNTH_MAX_EXPANSIONS"))
    options.maxExpansions = std::strtoull(n, nullptr, 10);
  if (const char *t = std::getenv("WEFT_SYNTH_TIME_LIMIT"))
    options.timeLimitSeconds = std::strtod(t, nullptr);
  options.progress = [](llvm::StringRef line) { llvm::errs() << line << "\n"; };
  auto start = std::chrono::steady_clock::now();
  auto result = synthesize(graph, spec, options);
  double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  llvm::outs() << llvm::formatv(
      "search {0:f6} s/step, evaluated {1:f6} s/step, expansions {2}, "
      "search wall {3:f3} s, total wall {4:f3} s, gap {5}, capped {6}\n",
      result->searchStepSeconds, result->evaluatedStepSeconds,
      result->stats.expansions, result->stats.wallSeconds, wall,
      result->stats.gap, result->stats.capped);
  std::map<std::string, unsigned> variants;
  for (const ExplainRow &row : result->explain)
    ++variants[row.variant];
  for (auto &[v, n] : variants)
    llvm::outs() << "  " << n << " x " << v << "\n";
}

TEST(SynthBench, CompareSteps) {
  BenchInputs in("WEFT_SYNTH_STEPS");
  if (!in.skip.empty())
    GTEST_SKIP() << in.skip;
  ASSERT_TRUE(in.graph) << in.error;
  ClusterSpec &spec = *in.spec;
  mlir::ModuleOp graph = *in.graph;
  SynthOptions options;
  options.memo = false;
  options.fixedRatios = std::getenv("WEFT_SYNTH_FIXED") != nullptr;
  if (const char *n = std::getenv("WEFT_SYNTH_MAX_EXPANSIONS"))
    options.maxExpansions = std::strtoull(n, nullptr, 10);
  auto result = synthesize(graph, spec, options);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  auto estimate = evaluatePlan(*result->plan, spec, options.eval);
  ASSERT_TRUE(bool(estimate));
  for (const ExplainRow &row : result->explain)
    llvm::outs() << llvm::formatv("search {0,-40} {1:e3} {2:e3}\n",
                                  row.op + " " + row.variant,
                                  row.computeSeconds, row.commSeconds);
  for (const CollectiveEstimate &c : estimate->collectives)
    if (c.forwardSeconds + c.dualSeconds > 0.01)
      llvm::outs() << llvm::formatv("coll   {0} {1} axis {2} {3} B {4:e3} s\n",
                                    c.op, c.location, c.axis, c.bytes,
                                    c.forwardSeconds + c.dualSeconds);
  for (const StepEstimate &s : estimate->steps)
    llvm::outs() << llvm::formatv("eval   {0,-40} {1:e3} {2:e3}\n", s.label,
                                  s.computeSeconds, s.commSeconds);
  llvm::outs() << "optimizer " << estimate->optimizerSeconds << "\n";
  if (const char *dump = std::getenv("WEFT_SYNTH_DUMP")) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dump, ec);
    result->plan->print(os);
  }
}

TEST(SynthBench, Seeds) {
  BenchInputs in("WEFT_SYNTH_SEEDS", /*withSpace=*/true);
  if (!in.skip.empty())
    GTEST_SKIP() << in.skip;
  ASSERT_TRUE(in.space) << in.error;
  synth::SearchSpace &s = *in.space;
  for (unsigned r = 0; r < s.numReps(); ++r)
    llvm::outs() << llvm::formatv(
        "rep {0}: floor {1:f2} GB, capacity {2:f2} GB\n", r,
        s.memoryFloor(0, r) / 1e9, s.capacity()[r] / 1e9);
  for (bool pruning : {true, false}) {
    auto least = synth::leastMemorySeed(s, pruning);
    llvm::outs() << "least-memory seed pruning=" << pruning << ": "
                 << (least ? std::to_string(least->cost) : "none") << "\n";
  }
  for (bool minMemory : {false, true}) {
    for (bool pruning : {true, false}) {
      auto seed = synth::dataParallelSeed(s, minMemory, pruning);
      llvm::outs() << llvm::formatv(
          "seed minMemory={0} pruning={1}: ", minMemory, pruning);
      if (!seed) {
        llvm::outs() << "none\n";
        continue;
      }
      llvm::outs() << llvm::formatv("{0:f4} s, peak", seed->cost);
      for (double m : seed->peakMemory)
        llvm::outs() << llvm::formatv(" {0:f2}", m / 1e9);
      llvm::outs() << " GB\n";
    }
  }
}

// Where a plan pays above the per-op floors (the bound's blind spots):
// WEFT_SYNTH_GAP=1 plus the model and cluster; WEFT_SYNTH_MAX_EXPANSIONS
// bounds the A* whose plan is examined (default 100000).
TEST(SynthBench, Gap) {
  BenchInputs in("WEFT_SYNTH_GAP", /*withSpace=*/true);
  if (!in.skip.empty())
    GTEST_SKIP() << in.skip;
  ASSERT_TRUE(in.space) << in.error;
  synth::SearchSpace &s = *in.space;
  synth::SearchLimits limits;
  limits.memo = false;
  limits.maxExpansions = 100000;
  if (const char *n = std::getenv("WEFT_SYNTH_MAX_EXPANSIONS"))
    limits.maxExpansions = std::strtoull(n, nullptr, 10);
  // Improves `plan` locally and prints its cost before and after.
  auto improveTimed = [&](llvm::StringRef label, synth::SearchOutcome &plan) {
    double before = plan.cost;
    auto t0 = std::chrono::steady_clock::now();
    uint64_t steps = synth::improvePlan(s, plan);
    llvm::outs() << llvm::formatv(
        "{0} {1:f4} -> {2:f4} s in {3} steps, {4:f2} s wall\n", label, before,
        plan.cost, steps,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
  };
  for (synth::SearchOutcome sd : synth::seedPlans(s))
    improveTimed("seed", sd);
  synth::SearchOutcome out = synth::search(s, limits);
  ASSERT_TRUE(out.found);
  improveTimed("improvePlan:", out);
  std::vector<synth::StepDetail> details;
  auto total = synth::replay(s, out.choices, &details);
  ASSERT_TRUE(total.has_value());
  double floors = 0;
  struct Row {
    double excess;
    unsigned p;
  };
  std::vector<Row> rows;
  for (unsigned p = 0; p < s.numPositions(); ++p) {
    floors += s.opFloor(p);
    const synth::StepDetail &d = details[p];
    double cost = d.computeSeconds + d.commSeconds + d.optimizerSeconds;
    rows.push_back({cost - s.opFloor(p), p});
  }
  llvm::outs() << llvm::formatv(
      "plan {0:f4} s, Σ op floors {1:f4} s, h(0) {2:f4} s, bound {3:f4} s\n",
      *total, floors, s.heuristic(0), out.lowerBound);
  llvm::sort(rows,
             [](const Row &a, const Row &b) { return a.excess > b.excess; });
  for (const Row &row : llvm::ArrayRef<Row>(rows).take_front(40)) {
    const synth::OpInfo &op = s.ops[row.p];
    const synth::StepDetail &d = details[row.p];
    const synth::OpOption &o = op.options[out.choices[row.p].option];
    std::string variant;
    for (uint16_t v : o.perAxis)
      variant += op.variantNames[v] + ",";
    llvm::outs() << llvm::formatv(
        "{0,4} {1,-22} {2,-40} excess {3:f4} floor {4:f4} compute {5:f4} "
        "comm {6:f4} opt {7:f4}\n",
        row.p, op.op->getName().getStringRef(), variant, row.excess,
        s.opFloor(row.p), d.computeSeconds, d.commSeconds, d.optimizerSeconds);
    for (const auto &r : d.relayouts)
      llvm::outs() << llvm::formatv(
          "       relayout v{0} {1} -> {2}: {3:f4} s, {4:e2} B\n", r.value,
          s.dist(r.from), s.dist(r.to), r.seconds, r.bytes);
  }
}

TEST(SynthBench, Slack) {
  // Where the lower bound is loose: along the best improved seed, per op
  // kind, Σ (step cost − the op's floor), and the bound at position 0.
  BenchInputs in("WEFT_SYNTH_SLACK", /*withSpace=*/true);
  if (!in.skip.empty())
    GTEST_SKIP() << in.skip;
  ASSERT_TRUE(in.space) << in.error;
  synth::SearchSpace &s = *in.space;
  auto seeds = synth::improvedSeedPlans(s);
  ASSERT_FALSE(seeds.empty());
  const synth::SearchOutcome &plan = seeds.front();
  std::map<std::string, std::pair<double, unsigned>> byKind;
  synth::StateKey key;
  double total = 0, floors = 0;
  for (unsigned p = 0; p < s.numPositions(); ++p) {
    auto r = s.step(p, key, plan.choices[p]);
    ASSERT_TRUE(r.has_value());
    auto &[slack, count] = byKind[s.ops[p].op->getName().getStringRef().str()];
    slack += r->cost - s.opFloor(p);
    count += 1;
    total += r->cost;
    floors += s.opFloor(p);
    key = std::move(r->next);
  }
  llvm::outs() << llvm::formatv(
      "plan {0:f6} s, Σ floors {1:f6} s, h(0) {2:f6} s\n", total, floors,
      s.heuristic(0, synth::StateKey()));
  for (auto &[kind, v] : byKind)
    llvm::outs() << llvm::formatv("  {0,-20} {1,5} ops, slack {2:f6} s\n", kind,
                                  v.second, v.first);
}
