//===- CellsOutput.cpp - weftc --cells: the Cell table --------------------===//

#include "CellsOutput.h"
#include "weft/Cell/CellEstimator.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace weft;
using namespace weft::cell;
namespace cl = llvm::cl;

CellFlags::CellFlags(cl::OptionCategory &category)
    : cells("cells",
            cl::desc("With --cluster and --global-batch: estimate every Cell "
                     "(GPU types and counts, stages) of the cluster and "
                     "print the table and the best Cells (docs/Cells.md)"),
            cl::cat(category)),
      full("cells-full",
           cl::desc("--cells: synthesise every Cell in full (default: the "
                    "first in full, the others in the fast mode)"),
           cl::cat(category)),
      prune("cells-prune",
            cl::desc("--cells: skip Cells whose lower bound exceeds the "
                     "fastest Cell found"),
            cl::cat(category)),
      homogeneous("cells-homogeneous",
                  cl::desc("--cells: only Cells of one GPU type"),
                  cl::cat(category)),
      maxStages("max-stages",
                cl::desc("--cells: pipeline stage counts 1..K per Cell"),
                cl::value_desc("K"), cl::init(1), cl::cat(category)) {}

/// "A100 12.3 GB, T4 9.1 GB".
static std::string memoryText(const CellEstimate &e) {
  std::string text;
  for (const auto &[type, bytes] : e.peakMemoryBytes)
    text += (text.empty() ? "" : ", ") + type + " " + formatBytes(bytes);
  return text;
}

static llvm::json::Object cellJSON(const CellEstimate &e) {
  llvm::json::Object devices, memory;
  for (const auto &[type, count] : e.cell.devices)
    devices[type] = int64_t(count);
  for (const auto &[type, bytes] : e.peakMemoryBytes)
    memory[type] = bytes;
  llvm::json::Object o{{"cell", formatCell(e.cell)},
                       {"devices", std::move(devices)},
                       {"gpus", int64_t(totalDevices(e.cell.devices))},
                       {"stages", int64_t(e.cell.stages)},
                       {"feasible", e.feasible},
                       {"source", sourceName(e.source)},
                       {"lower_bound_s", e.lowerBoundSeconds},
                       {"estimate", true}};
  if (e.feasible) {
    o["micro_batches"] = int64_t(e.microBatches);
    o["iteration_s"] = e.iterationSeconds;
    o["samples_per_s"] = e.samplesPerSecond;
    o["peak_memory_bytes"] = std::move(memory);
  } else {
    o["reason"] = e.reason;
  }
  return o;
}

llvm::Error weft::printCells(const CellFlags &flags, llvm::StringRef model,
                             int64_t globalBatch, const ClusterSpec &spec,
                             const EvalOptions &eval, bool json,
                             llvm::raw_ostream &os) {
  if (flags.maxStages < 1)
    return badInput("--max-stages must be at least 1");
  if (globalBatch <= 0)
    return badInput("--cells needs --global-batch N (the samples of one "
                    "iteration, the same on every Cell)");
  JobModelSpec job;
  job.path = model.str();
  job.batch = globalBatch;
  mlir::MLIRContext context;
  auto graphs = ModelGraphs::open(context, job);
  if (!graphs)
    return graphs.takeError();
  CellOptions options;
  options.fast = !flags.full;
  options.eval = eval;
  CellEstimator estimator(**graphs, spec, options);
  std::vector<Cell> cells =
      enumerateCells(spec, flags.maxStages, !flags.homogeneous);
  auto estimates = estimator.estimateAll(cells, flags.prune);
  if (!estimates)
    return estimates.takeError();
  // The best Cell (most samples/s) per GPU type and overall.
  std::map<std::string, const CellEstimate *> bestOfType;
  const CellEstimate *best = nullptr;
  for (const CellEstimate &e : *estimates) {
    if (!e.feasible)
      continue;
    if (!best || e.samplesPerSecond > best->samplesPerSecond)
      best = &e;
    if (e.cell.heterogeneous())
      continue;
    const CellEstimate *&b = bestOfType[e.cell.devices.begin()->first];
    if (!b || e.samplesPerSecond > b->samplesPerSecond)
      b = &e;
  }
  const CellStats &stats = estimator.stats();
  if (json) {
    llvm::json::Array rows;
    for (const CellEstimate &e : *estimates)
      rows.push_back(cellJSON(e));
    llvm::json::Object perType;
    for (const auto &[type, e] : bestOfType)
      perType[type] = cellJSON(*e);
    llvm::json::Object root{
        {"model", model.str()},
        {"cluster", spec.name},
        {"global_batch", globalBatch},
        {"mode", flags.full ? "full" : "fast"},
        {"cells", std::move(rows)},
        {"best_per_type", std::move(perType)},
        {"full_syntheses", int64_t(stats.fullSyntheses)},
        {"fast_estimates", int64_t(stats.fastEstimates)},
        {"pipeline_syntheses", int64_t(stats.pipelineSyntheses)},
        {"pruned", int64_t(stats.pruned)}};
    if (best)
      root["best"] = cellJSON(*best);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    return llvm::Error::success();
  }
  os << llvm::formatv("Cells of {0} on {1}: global batch {2}; {3} Cells, "
                      "{4} synthesised in full, {5} in the fast mode, {6} "
                      "pipelined, {7} pruned; every time an estimate\n",
                      llvm::sys::path::filename(model), spec.name, globalBatch,
                      cells.size(), stats.fullSyntheses, stats.fastEstimates,
                      stats.pipelineSyntheses, stats.pruned);
  os << llvm::formatv("{0,-24} {1,5} {2,6} {3,6} {4,11} {5,10}  {6,-28} {7}\n",
                      "cell", "GPUs", "stages", "micro", "iteration",
                      "samples/s", "peak memory per device", "feasible");
  for (const CellEstimate &e : *estimates) {
    std::string devices = formatMultiset(e.cell.devices);
    unsigned gpus = totalDevices(e.cell.devices);
    if (e.feasible)
      os << llvm::formatv(
          "{0,-24} {1,5} {2,6} {3,6} {4,11} {5,10:F1}  {6,-28} yes\n", devices,
          gpus, e.cell.stages, e.microBatches,
          formatSeconds(e.iterationSeconds), e.samplesPerSecond, memoryText(e));
    else
      os << llvm::formatv("{0,-24} {1,5} {2,6} {3,6} {4,11} {5,10}  {6,-28} "
                          "no: {7}\n",
                          devices, gpus, e.cell.stages, "-", "-", "-", "-",
                          e.reason);
  }
  for (const auto &[type, e] : bestOfType)
    os << llvm::formatv("best {0,-8} {1} ({2}, {3:F1} samples/s)\n", type + ":",
                        formatCell(e->cell), formatSeconds(e->iterationSeconds),
                        e->samplesPerSecond);
  if (best)
    os << llvm::formatv(
        "best overall:  {0} ({1}, {2:F1} samples/s)\n", formatCell(best->cell),
        formatSeconds(best->iterationSeconds), best->samplesPerSecond);
  else
    os << "best overall:  none (no Cell is feasible)\n";
  return llvm::Error::success();
}
