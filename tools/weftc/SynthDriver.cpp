//===- SynthDriver.cpp - weftc -o: synthesise, compare, write -------------===//

#include "SynthDriver.h"
#include "Explain.h"
#include "PlanCache.h"
#include "PlanOutput.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Builders.h"
#include "weft/Baselines/Baselines.h"
#include "weft/Emit/StepPicture.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "weft/Synth/PlanChoice.h"
#include "weft/Synth/Synthesize.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cmath>

using namespace weft;
namespace cl = llvm::cl;

/// --max-expansions's help, with the default budget it replaces.
static llvm::StringRef maxExpansionsHelp() {
  static const std::string help =
      llvm::formatv("Stop the search after N expansions; the best plan found "
                    "is written with capped: true (exit 2 if none). Without "
                    "this flag and --time-limit: {0} per search, stopped "
                    "earlier when its bound cannot reach the best plan in "
                    "time (docs/Synthesis.md)",
                    kDefaultMaxExpansions)
          .str();
  return help;
}

SynthFlags::SynthFlags(cl::OptionCategory &category)
    : heuristic("heuristic",
                cl::desc("A* heuristic: admissible (default; the state "
                         "bound: each remaining op's cost floor and the tree "
                         "bound, each value's consumers chosen together and "
                         "its dearest relayout charged once from what the "
                         "state holds; docs/Synthesis.md) or zero "
                         "(uniform-cost search, as HAP)"),
                cl::init("admissible"), cl::cat(category)),
      recompute("recompute",
                cl::desc("Activation recomputation as a search choice: auto "
                         "(default; offered when no plan fits memory "
                         "without it), always, or never"),
                cl::init("auto"), cl::cat(category)),
      microBatches(
          "micro-batches",
          cl::desc("Gradient accumulation: run each step as N equal "
                   "micro-batches and one optimizer step. auto (default): "
                   "1, and when no plan fits memory 2, 4, 8, ... (needs a "
                   "symbolic batch dim). With --stages S > 1: the "
                   "pipeline's micro-batch count M (auto: 4 S or a "
                   "doubling of it, by the stage table's estimate)"),
          cl::value_desc("N|auto"), cl::init("auto"), cl::cat(category)),
      stages("stages",
             cl::desc("Pipeline stages (docs/Pipeline.md): N cuts the "
                      "program at block boundaries into N stages, each on "
                      "its own group of nodes, run 1F1B; auto compares 1 "
                      "to 8 stages (at most one per node) and keeps the "
                      "fastest plan that fits. Default: 1 (no pipeline)"),
             cl::value_desc("N|auto"), cl::init("1"), cl::cat(category)),
      noMemo("no-memo", cl::desc("Do not memoise repeated blocks"),
             cl::cat(category)),
      fixedRatios("fixed-ratios",
                  cl::desc("Keep sharding ratios proportional to device "
                           "speed (no A* / LP alternation)"),
                  cl::cat(category)),
      explain("explain",
              cl::desc("Print the per-op table of the written plan and its "
                       "largest steps"),
              cl::cat(category)),
      noCache("no-cache",
              cl::desc("Neither read nor write the plan cache "
                       "($WEFT_CACHE_DIR, else ~/.cache/weft)"),
              cl::cat(category)),
      timeLimit("time-limit",
                cl::desc("Stop the search after S seconds of wall time and "
                         "keep the best plan found (exit 2 if none)"),
                cl::value_desc("S"), cl::init(0), cl::cat(category)),
      maxExpansions("max-expansions", cl::desc(maxExpansionsHelp()),
                    cl::value_desc("N"), cl::init(0), cl::cat(category)),
      searchMemory("search-memory",
                   cl::desc("Stop a search whose tables (states, open list) "
                            "reach about GB gigabytes (default 1); the best "
                            "plan found is written with capped: true"),
                   cl::value_desc("GB"), cl::init(0), cl::cat(category)),
      minRatioMove(
          "min-ratio-move",
          cl::desc("Alternation: search again at the ratio LP's ratios only "
                   "when it moved some device class's ratio by at least "
                   "this fraction (default 0.05; 0: until the step time "
                   "stops improving)"),
          cl::value_desc("F"), cl::init(0.05), cl::cat(category)),
      align("align",
            cl::desc("Every integer shard size a multiple of N (on top of "
                     "reshape alignments)"),
            cl::value_desc("N"), cl::init(1), cl::cat(category)),
      bucketMb("bucket-mb",
               cl::desc("Gradient sync in buckets of N MiB (default 25, "
                        "PyTorch DDP's): the plan's spmd.gradient_bucket_"
                        "bytes, priced and run as one all-reduce per bucket; "
                        "0: one collective per parameter tensor"),
               cl::value_desc("N"), cl::init(25), cl::cat(category)),
      dumpDir("dump-dir",
              cl::desc("Write the IR between synthesis stages to DIR"),
              cl::value_desc("DIR"), cl::cat(category)) {}

llvm::Error weft::applyBucketFlag(const SynthFlags &flags,
                                  mlir::ModuleOp graph) {
  if (!flags.bucketMb.getNumOccurrences())
    return llvm::Error::success();
  if (!(flags.bucketMb >= 0))
    return badInput("--bucket-mb must be 0 or more, got {0}",
                    flags.bucketMb.getValue());
  auto bytes = int64_t(std::llround(flags.bucketMb * 1024 * 1024));
  graph->setAttr(spmd::SpmdDialect::kGradientBucketAttr,
                 mlir::Builder(graph.getContext()).getI64IntegerAttr(bytes));
  return llvm::Error::success();
}

llvm::Expected<SynthOptions> weft::synthOptionsOf(const SynthFlags &flags,
                                                  const EvalOptions &eval) {
  SynthOptions options;
  if (flags.heuristic == "admissible")
    options.heuristic = SynthOptions::Heuristic::Admissible;
  else if (flags.heuristic == "zero")
    options.heuristic = SynthOptions::Heuristic::Zero;
  else
    return badInput("unknown --heuristic '{0}' (expected admissible or zero)",
                    flags.heuristic.getValue());
  if (flags.recompute == "auto")
    options.recompute = SynthOptions::Recompute::Auto;
  else if (flags.recompute == "always")
    options.recompute = SynthOptions::Recompute::Always;
  else if (flags.recompute == "never")
    options.recompute = SynthOptions::Recompute::Never;
  else
    return badInput("unknown --recompute '{0}' (expected auto, always or "
                    "never)",
                    flags.recompute.getValue());
  if (flags.timeLimit < 0)
    return badInput("--time-limit must be positive, got {0}",
                    double(flags.timeLimit));
  if (flags.searchMemory < 0)
    return badInput("--search-memory must be positive, got {0} GB",
                    double(flags.searchMemory));
  if (flags.minRatioMove < 0)
    return badInput("--min-ratio-move must be at least 0, got {0}",
                    double(flags.minRatioMove));
  if (flags.align < 1)
    return badInput("--align must be at least 1, got {0}",
                    int64_t(flags.align));
  options.memo = !flags.noMemo;
  options.fixedRatios = flags.fixedRatios;
  options.minRatioMove = flags.minRatioMove;
  options.timeLimitSeconds = flags.timeLimit;
  options.maxExpansions = flags.maxExpansions;
  options.maxStateBytes = uint64_t(flags.searchMemory * 1e9);
  options.align = flags.align;
  options.eval = eval;
  return options;
}

/// Size and modification time of the running weftc: a rebuilt compiler
/// (another search, cost model or builder) never reuses an older plan.
static std::string buildStamp() {
  std::string exe = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&buildStamp));
  llvm::sys::fs::file_status status;
  if (exe.empty() || llvm::sys::fs::status(exe, status))
    return "unknown build";
  return exe + ":" + std::to_string(status.getSize()) + ":" +
         std::to_string(
             status.getLastModificationTime().time_since_epoch().count());
}

static std::string cacheKey(const SynthFlags &flags, const SynthInputs &in) {
  return PlanCache::makeKey(
      {"weft-plan-cache-v1", buildStamp(), modelFingerprint(in.graph),
       in.clusterText, std::to_string(int(in.eval.dtype)),
       std::to_string(int(in.eval.optimizer)),
       in.eval.profile ? "profile" : "roofline", flags.heuristic.getValue(),
       flags.recompute.getValue(), std::to_string(flags.noMemo.getValue()),
       std::to_string(flags.fixedRatios.getValue()),
       std::to_string(flags.minRatioMove.getValue()),
       std::to_string(flags.timeLimit.getValue()),
       std::to_string(flags.maxExpansions.getValue()),
       std::to_string(flags.searchMemory.getValue()),
       std::to_string(flags.align.getValue())});
}

llvm::Error weft::synthesizeAndWrite(const SynthFlags &flags,
                                     const SynthInputs &in,
                                     llvm::StringRef outDir,
                                     llvm::raw_ostream &os) {
  auto options = synthOptionsOf(flags, in.eval);
  if (!options)
    return options.takeError();
  options->progress = [](llvm::StringRef line) {
    llvm::errs() << "weftc: " << line << "\n";
  };
  // --dump-dir: the graph program, then the plan after every stage.
  unsigned stage = 0;
  std::string dumpError;
  auto dumpTo = [&](llvm::StringRef name, mlir::ModuleOp module) {
    if (flags.dumpDir.empty() || !dumpError.empty())
      return;
    llvm::SmallString<128> path(flags.dumpDir.getValue());
    llvm::sys::path::append(path, stageDumpName(++stage, name) + ".mlir");
    if (std::error_code ec = llvm::sys::fs::create_directories(flags.dumpDir))
      dumpError = ec.message();
    else if (auto err = writeFile(path, [&](llvm::raw_ostream &os) {
               module->print(os);
               os << "\n";
             }))
      dumpError = llvm::toString(std::move(err));
  };
  if (!flags.dumpDir.empty())
    options->dump = dumpTo;
  mlir::MLIRContext *ctx = in.graph->getContext();
  // The profile DB's contents are not part of the key: bypass the cache.
  bool useCache = !flags.noCache && !in.eval.profile && flags.dumpDir.empty();
  std::optional<PlanCache> cache;
  if (useCache)
    cache = PlanCache::open(cacheKey(flags, in));

  mlir::OwningOpRef<mlir::ModuleOp> plan;
  SynthesisRecord record;
  std::optional<double> searchSeconds;
  // A plan cut short by the clock is not reproducible: not cached.
  bool clocked = flags.timeLimit > 0;
  if (cache) {
    if (auto hit = cache->lookup(*ctx)) {
      plan = std::move(hit->first);
      record = hit->second;
    } else if (auto shortfall = cache->lookupShortfall()) {
      return memoryError(shortfall->second, "{0} (from the plan cache)",
                         shortfall->first);
    }
  }
  if (!plan) {
    dumpTo("graph", in.graph);
    auto result = synthesize(in.graph, in.spec, *options);
    if (!result) {
      llvm::Error err = result.takeError();
      double overflow = 0;
      std::string message;
      if (cache && !clocked && isMemoryShortfall(err, &overflow, &message)) {
        if (auto serr = cache->storeShortfall(message, overflow))
          llvm::errs() << "weftc: warning: plan cache: "
                       << llvm::toString(std::move(serr)) << "\n";
      }
      return err;
    }
    plan = std::move(result->plan);
    record.wallSeconds = result->stats.wallSeconds;
    record.expansions = result->stats.expansions;
    record.gap = result->stats.gap;
    record.capped = result->stats.capped;
    record.alternations = result->stats.alternations;
    record.continuousStepSeconds = result->continuousStepSeconds;
    record.integerStepSeconds = result->integerStepSeconds;
    searchSeconds = result->searchStepSeconds;
    bool timedOut = clocked && record.gap > 0;
    if (cache && !timedOut)
      if (auto err = cache->store(*plan, record))
        llvm::errs() << "weftc: warning: plan cache: "
                     << llvm::toString(std::move(err)) << "\n";
  }

  if (!dumpError.empty())
    return badInput("--dump-dir: {0}", dumpError);
  auto baselines = in.baselines();
  if (!baselines)
    return baselines.takeError();
  std::vector<CandidatePlan> candidates;
  for (const BaselineRow &row : **baselines)
    candidates.push_back({row.name, *row.plan});
  auto chosen = choosePlan(std::move(plan), candidates, in.spec, in.eval);
  if (!chosen)
    return chosen.takeError();
  PlanContext context = in.context;
  context.synthesis = record;
  context.searchStepSeconds = chosen->searchEstimate.stepSeconds;
  context.source = chosen->source;
  os << llvm::formatv(
      "plan:                {0} per step (estimate; synthesis {1} wall, {2} "
      "expansions, gap {3:P}{4}{5})\n",
      formatSeconds(chosen->searchEstimate.stepSeconds),
      formatSeconds(record.wallSeconds), record.expansions, record.gap,
      record.capped ? ", capped" : "",
      record.cached ? ", from the plan cache" : "");
  // The baselines are evaluated exactly as the plan is (gradient-sync
  // overlap included), so the comparison is like for like; a baseline that
  // is faster and fits is written instead, and plan.json says so.
  context.baselines.clear();
  for (const auto &[name, b] : chosen->candidates) {
    context.baselines.emplace_back(name, b.stepSeconds);
    os << llvm::formatv("  vs {0,-6} {1,10} ({2:F2}x; evaluated like the "
                        "plan, with gradient-sync overlap{3})\n",
                        name, formatSeconds(b.stepSeconds),
                        b.stepSeconds / chosen->searchEstimate.stepSeconds,
                        b.fits ? "" : "; does not fit in memory");
  }
  if (chosen->source != "search")
    os << llvm::formatv("writing {0}: it beats the search's plan\n",
                        chosen->source);
  EvalOptions final = in.eval;
  final.overlapGradientSync = true;
  if (!chosen->estimate.fits)
    return shortOfMemory(chosen->estimate, final);
  plan = std::move(chosen->plan);
  auto estimate = &chosen->estimate;
  if (flags.explain)
    printExplain(*plan, *estimate, os);
  if (auto err = writePlanFiles(outDir, *plan, in.spec, *estimate, context))
    return err;
  if (auto err = writeRunnableFiles(outDir, *plan, in.graph,
                                    llvm::sys::path::filename(context.model)))
    return err;
  if (auto err = writeStepPictures(outDir, *plan, in.spec, final,
                                   llvm::sys::path::filename(context.model)))
    return err;
  os << "wrote:               " << outDir << "/plan.mlir, " << outDir
     << "/plan.json, " << outDir << "/torch/, " << outDir << "/launch/, "
     << outDir << "/timeline.svg, " << outDir << "/trace.json\n";
  return llvm::Error::success();
}
