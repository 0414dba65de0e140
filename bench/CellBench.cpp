//===- CellBench.cpp - Cell estimates per second and their accuracy ------===//
//
// A measuring tool, not a test (build/bin/weft-cell-bench; bench/cells.sh
// runs it and docs/benchmarks.md holds its numbers):
//   weft-cell-bench JOB_TYPE CLUSTER [--compare N] [--homogeneous]
//                   [--improve STEPS] [--memo-plans N] [--no-evaluate]
//                   [--no-ratio-lp] [--lp-rounds N] [--seeds-below N]
//                   [--all-seeds] [--no-select] [--full-cache FILE]
// --full-cache keeps the full syntheses' figures (Cell, feasible, seconds)
// in FILE and reads them back, so fast-mode variants compare against the
// same references without synthesising them again.
// Estimates every one-stage Cell of CLUSTER (CellEstimator.h's
// enumerateCells) in fast mode, the first Cell apart (it is synthesised in
// full), and prints the rate of the further estimates; then synthesises N
// of them in full (evenly spread over the list) and prints the fast
// estimate's relative error against each.
//
//===----------------------------------------------------------------------===//

#include "weft/Cell/CellEstimator.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sys/resource.h>

using namespace weft;
using namespace weft::cell;

/// CPU seconds of this process (user + system): the machine is shared, so
/// wall time alone overstates the cost.
static double cpuSeconds() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
         usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int main(int argc, char **argv) {
  if (argc < 3) {
    llvm::errs() << "usage: weft-cell-bench JOB_TYPE CLUSTER [--compare N] "
                    "[--homogeneous] [--improve STEPS] [--memo-plans N]\n";
    return 1;
  }
  unsigned compare = 10;
  bool mixed = true;
  CellOptions fastOptions;
  std::string fullCache;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--compare") && i + 1 < argc)
      compare = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--homogeneous"))
      mixed = false;
    else if (!std::strcmp(argv[i], "--improve") && i + 1 < argc)
      fastOptions.improveSteps = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--no-evaluate"))
      fastOptions.evaluate = false;
    else if (!std::strcmp(argv[i], "--all-seeds"))
      fastOptions.oneSeed = false;
    else if (!std::strcmp(argv[i], "--no-select"))
      fastOptions.selectCollectives = false;
    else if (!std::strcmp(argv[i], "--full-cache") && i + 1 < argc)
      fullCache = argv[++i];
    else if (!std::strcmp(argv[i], "--no-ratio-lp"))
      fastOptions.ratioLP = false;
    else if (!std::strcmp(argv[i], "--lp-rounds") && i + 1 < argc)
      fastOptions.lpRounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seeds-below") && i + 1 < argc)
      fastOptions.seedsBelow = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--memo-plans") && i + 1 < argc)
      fastOptions.memoPlans = std::atoi(argv[++i]);
    else
      return reportError("weft-cell-bench",
                         badInput("unknown argument '{0}'", argv[i]));
  }
  auto spec = parseJobModel(argv[1]);
  if (!spec)
    return reportError("weft-cell-bench", spec.takeError());
  auto cluster = loadClusterSpec(argv[2]);
  if (!cluster)
    return reportError("weft-cell-bench", cluster.takeError());
  mlir::MLIRContext context;
  auto model = ModelGraphs::open(context, *spec);
  if (!model)
    return reportError("weft-cell-bench", model.takeError());
  std::vector<Cell> cells = enumerateCells(*cluster, 1, mixed);
  CellEstimator fast(**model, *cluster, fastOptions);
  std::vector<CellEstimate> fastOut;
  double t0 = now(), cpuAfterFirst = 0, wallAfterFirst = 0;
  for (unsigned i = 0; i < cells.size(); ++i) {
    if (i == 1) {
      cpuAfterFirst = cpuSeconds();
      wallAfterFirst = now();
    }
    auto e = fast.estimate(cells[i]);
    if (!e)
      return reportError("weft-cell-bench", e.takeError());
    fastOut.push_back(*e);
    if (i == 0)
      llvm::outs() << llvm::formatv("first Cell {0}: {1:f3} s (full "
                                    "synthesis; calibration {2:f4})\n",
                                    formatCell(cells[0]), now() - t0,
                                    fast.calibration());
  }
  double fastCpu = cpuSeconds() - cpuAfterFirst;
  double fastWall = now() - wallAfterFirst;
  unsigned n = cells.size() - 1;
  unsigned feasible = 0;
  for (const CellEstimate &e : fastOut)
    feasible += e.feasible;
  llvm::outs() << llvm::formatv(
      "further Cells: {0} in {1:f3} s wall = {2:f1} estimates/s; {3:f3} "
      "CPU s = {4:f1} estimates per CPU second ({5} of {6} Cells feasible; "
      "{7} fast, {8} full; {9} replays, {10} won by a replayed plan)\n",
      n, fastWall, n / std::max(fastWall, 1e-9), fastCpu,
      n / std::max(fastCpu, 1e-9), feasible, cells.size(),
      fast.stats().fastEstimates, fast.stats().fullSyntheses,
      fast.stats().replays, fast.stats().replayWins);
  const CellStats &st = fast.stats();
  llvm::outs() << llvm::formatv(
      "fast mode CPU: search spaces {0:f3} s, seed plans {1:f3} s, memo "
      "replays {2:f3} s, local improvement {3:f3} s, ratio LP {4:f3} s, "
      "evaluator {5:f3} s; {6} Cells handed to full synthesis\n",
      st.buildCpu, st.seedCpu, st.replayCpu, st.improveCpu, st.ratioCpu,
      st.evalCpu, st.fallbacks);
  // Accuracy against full synthesis of the same Cells.
  CellOptions fullOptions = fastOptions;
  fullOptions.fast = false;
  CellEstimator full(**model, *cluster, fullOptions);
  std::map<std::string, CellEstimate> cached;
  if (!fullCache.empty())
    if (auto buffer = llvm::MemoryBuffer::getFile(fullCache)) {
      llvm::SmallVector<llvm::StringRef> lines;
      (*buffer)->getBuffer().split(lines, '\n', -1, false);
      for (llvm::StringRef line : lines) {
        llvm::SmallVector<llvm::StringRef> f;
        line.split(f, '\t');
        if (f.size() != 5)
          continue;
        CellEstimate e;
        e.feasible = f[1] == "1";
        f[2].getAsDouble(e.iterationSeconds);
        f[3].getAsInteger(10, e.microBatches);
        f[4].getAsDouble(e.wallSeconds);
        cached[f[0].str()] = e;
      }
    }
  std::vector<double> errors;
  unsigned agree = 0, compared = 0;
  for (unsigned k = 0; k < compare && k + 1 < cells.size(); ++k) {
    unsigned i = 1 + k * (cells.size() - 1) / std::max(1u, compare);
    std::string name = formatCell(cells[i]);
    std::optional<CellEstimate> e;
    if (auto hit = cached.find(name); hit != cached.end()) {
      e = hit->second;
    } else {
      auto made = full.estimate(cells[i]);
      if (!made)
        return reportError("weft-cell-bench", made.takeError());
      e = *made;
      if (!fullCache.empty()) {
        std::error_code ec;
        llvm::raw_fd_ostream os(fullCache, ec, llvm::sys::fs::OF_Append);
        if (!ec)
          os << name << "\t" << e->feasible << "\t"
             << llvm::formatv("{0:e16}", e->iterationSeconds) << "\t"
             << e->microBatches << "\t"
             << llvm::formatv("{0:f3}", e->wallSeconds) << "\n";
      }
    }
    ++compared;
    const CellEstimate &f = fastOut[i];
    agree += e->feasible == f.feasible;
    if (!e->feasible || !f.feasible) {
      llvm::outs() << llvm::formatv("{0,-28} full {1} fast {2}\n",
                                    formatCell(cells[i]),
                                    e->feasible ? "feasible" : "infeasible",
                                    f.feasible ? "feasible" : "infeasible");
      continue;
    }
    double err = f.iterationSeconds / e->iterationSeconds - 1;
    errors.push_back(std::fabs(err));
    llvm::outs() << llvm::formatv(
        "{0,-28} full {1:f4} s ({2:f1} s wall, m={3}) fast {4:f4} s "
        "({5:f3} s wall, m={6}) error {7:+f1} %\n",
        formatCell(cells[i]), e->iterationSeconds, e->wallSeconds,
        e->microBatches, f.iterationSeconds, f.wallSeconds, f.microBatches,
        100 * err);
  }
  std::sort(errors.begin(), errors.end());
  auto at = [&](double q) {
    return errors.empty() ? 0.0
                          : errors[std::min<size_t>(errors.size() - 1,
                                                    size_t(q * errors.size()))];
  };
  unsigned within = std::count_if(errors.begin(), errors.end(),
                                  [](double e) { return e <= 0.05; });
  llvm::outs() << llvm::formatv(
      "accuracy: {0} Cells compared, feasibility agrees on {1}; |error| "
      "median {2:f1} %, p90 {3:f1} %, max {4:f1} %, within 5 %: {5} of {6}\n",
      compared, agree, 100 * at(0.5), 100 * at(0.9),
      100 * (errors.empty() ? 0 : errors.back()), within, errors.size());
  return 0;
}
