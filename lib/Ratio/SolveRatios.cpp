//===- SolveRatios.cpp - The sharding-ratio LP ----------------------------===//
//
// Builds the LP of docs/Ratios.md into LinearProgram (solver-agnostic) and
// reads the ratios back. When memory makes it infeasible, an elastic LP
// (every memory row loosened by one slack, minimising the largest relative
// overflow) finds the class that lacks memory.
//
//===----------------------------------------------------------------------===//

#include "weft/Ratio/SolveRatios.h"
#include "weft/Ratio/CostKey.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/StepCollapse.h"
#include "weft/Support/Error.h"
#include "weft/Support/LinearProgram.h"
#include "weft/Support/Units.h"
#include "llvm/ADT/StringMap.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::ratio;

namespace {
/// Σ coef·column + constant, collected for one row.
struct RowSum {
  std::vector<std::pair<unsigned, double>> coeffs;
  double constant = 0;
};

/// Builds the ratio LP; `elastic` turns it into the memory-overflow LP.
class RatioLpBuilder {
public:
  RatioLpBuilder(const RatioProblem &p, const CollapsedSteps &steps,
                 const LpOptions &options, bool elastic)
      : p(p), steps(steps), options(options), elastic(elastic) {}

  llvm::Error build();
  LinearProgram lp;
  /// [segment][class] column of each ratio.
  std::vector<std::vector<unsigned>> ratioCol;
  /// Per distinct step.
  std::vector<unsigned> computeCol, commCol;
  /// Elastic LP only: the relative overflow every memory row may take
  /// (-1: no memory row).
  int slackCol = -1;

private:
  llvm::Error addRatioColumns();
  void addLinear(RowSum &row, const LinearCost &cost, double scale = 1);
  void addMax(RowSum &row, const MaxCost &cost);
  void addNic(RowSum &row, const NicLoad &load, const Node &node);
  /// Adds row.constant + Σ row ≤ column (the epigraph of a time variable).
  void addBelow(RowSum row, unsigned column);
  void addStepRows(unsigned distinct);
  void addMemoryRows();

  const RatioProblem &p;
  const CollapsedSteps &steps;
  const LpOptions &options;
  bool elastic;
  /// Epigraph columns shared by max terms with the same pieces.
  llvm::StringMap<unsigned> maxColumns;
};
} // namespace

llvm::Error RatioLpBuilder::addRatioColumns() {
  const std::optional<TrustRegion> &region = options.trustRegion;
  if (region) {
    if (!(region->radius >= 0) || !std::isfinite(region->radius))
      return badInput("trust region radius {0}, expected a finite value >= 0",
                      region->radius);
    if (region->center.size() != p.segments.size())
      return badInput("trust region center has {0} segments, expected {1}",
                      region->center.size(), p.segments.size());
  }
  ratioCol.resize(p.segments.size());
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    const Segment &seg = p.segments[s];
    if (region && region->center[s].size() != p.classes.size())
      return badInput("trust region center of segment '{0}' has {1} ratios, "
                      "expected {2}",
                      seg.name, region->center[s].size(), p.classes.size());
    double lowSum = 0, highSum = 0;
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      double count = p.classes[c].count;
      double lb = 0, ub = 1 / count;
      if (seg.fixedRatios) {
        lb = ub = (*seg.fixedRatios)[c];
      } else if (region) {
        lb = std::max(lb, region->center[s][c] - region->radius);
        ub = std::min(ub, region->center[s][c] + region->radius);
      }
      if (lb > ub)
        return badInput("trust region leaves no ratio for class '{0}' in "
                        "segment '{1}'",
                        p.classes[c].name, seg.name);
      lowSum += count * lb;
      highSum += count * ub;
      ratioCol[s].push_back(lp.addColumn(lb, ub, 0));
    }
    if (seg.fixedRatios)
      continue;
    if (lowSum > 1 + 1e-9 || highSum < 1 - 1e-9)
      return badInput("trust region around segment '{0}' admits shares "
                      "summing to [{1}, {2}], which excludes 1",
                      seg.name, lowSum, highSum);
    std::vector<std::pair<unsigned, double>> sum;
    for (unsigned c = 0; c < p.classes.size(); ++c)
      sum.push_back({ratioCol[s][c], double(p.classes[c].count)});
    lp.addRow(sum, 1, 1);
  }
  return llvm::Error::success();
}

void RatioLpBuilder::addLinear(RowSum &row, const LinearCost &cost,
                               double scale) {
  row.constant += scale * cost.constant;
  for (const RatioTerm &t : cost.terms)
    row.coeffs.push_back({ratioCol[t.segment][t.deviceClass], scale * t.coef});
}

void RatioLpBuilder::addMax(RowSum &row, const MaxCost &cost) {
  // scale·max_p piece_p = scale·E with E ≥ piece_p; E is shared by every max
  // term over the same pieces (e.g. all padded all-gathers of one segment).
  auto [it, inserted] = maxColumns.try_emplace(piecesKey(cost), 0);
  if (inserted) {
    // Constant pieces bound E from below directly (no singleton rows).
    double lower = -LinearProgram::kInf;
    for (const LinearCost &piece : cost.pieces)
      if (piece.terms.empty())
        lower = std::max(lower, piece.constant);
    it->second = lp.addColumn(lower, LinearProgram::kInf, 0);
    for (const LinearCost &piece : cost.pieces) {
      if (piece.terms.empty())
        continue;
      RowSum pieceRow;
      addLinear(pieceRow, piece);
      addBelow(std::move(pieceRow), it->second);
    }
  }
  row.coeffs.push_back({it->second, cost.scale});
}

void RatioLpBuilder::addNic(RowSum &row, const NicLoad &load,
                            const Node &node) {
  // (1 − Σ_{i∈node} B_i)·bytes / bandwidth.
  double perShare = load.bytes / node.nicBandwidth;
  row.constant += perShare;
  for (const auto &[cls, devices] : node.devices)
    row.coeffs.push_back({ratioCol[load.segment][cls], -perShare * devices});
}

void RatioLpBuilder::addBelow(RowSum row, unsigned column) {
  row.coeffs.push_back({column, -1.0});
  lp.addRow(row.coeffs, -LinearProgram::kInf, -row.constant);
}

/// A key of a node's composition and NIC: nodes with equal keys give equal
/// rows.
static std::string nodeShapeKey(const Node &node) {
  auto devices = node.devices;
  llvm::sort(devices);
  std::string key = std::to_string(node.nicBandwidth);
  for (const auto &[cls, count] : devices)
    key += "," + std::to_string(cls) + "x" + std::to_string(count);
  return key;
}

void RatioLpBuilder::addStepRows(unsigned distinct) {
  const Step &step = p.steps[steps.representative[distinct]];
  double weight = elastic ? 0 : steps.multiplicity[distinct];
  unsigned computeTime =
      lp.addColumn(-LinearProgram::kInf, LinearProgram::kInf, weight);
  unsigned commTime =
      lp.addColumn(-LinearProgram::kInf, LinearProgram::kInf, weight);
  computeCol.push_back(computeTime);
  commCol.push_back(commTime);
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    const StepClassCost &cost = step.perClass[c];
    RowSum compute;
    addLinear(compute, cost.compute);
    for (const MaxCost &m : cost.computeMax)
      addMax(compute, m);
    addBelow(std::move(compute), computeTime);

    RowSum comm;
    addLinear(comm, cost.comm);
    for (const MaxCost &m : cost.commMax)
      addMax(comm, m);
    if (cost.nicLoads.empty()) {
      addBelow(std::move(comm), commTime);
      continue;
    }
    // One row per distinct shape of node holding this class.
    llvm::StringMap<bool> seen;
    for (unsigned n : p.nodesOfClass(c)) {
      if (!seen.try_emplace(nodeShapeKey(p.nodes[n]), true).second)
        continue;
      RowSum row = comm;
      for (const NicLoad &load : cost.nicLoads)
        addNic(row, load, p.nodes[n]);
      addBelow(std::move(row), commTime);
    }
  }
}

void RatioLpBuilder::addMemoryRows() {
  for (unsigned c = 0; c < p.memory.size(); ++c) {
    double capacity = p.classes[c].memoryCapacity;
    if (!std::isfinite(capacity))
      continue;
    // Divided by the capacity: bytes and seconds differ by ~20 orders.
    RowSum row;
    addLinear(row, p.memory[c], 1 / capacity);
    if (elastic) {
      if (slackCol < 0)
        slackCol = int(lp.addColumn(0, LinearProgram::kInf, 1));
      row.coeffs.push_back({unsigned(slackCol), -1.0});
    }
    lp.addRow(row.coeffs, -LinearProgram::kInf, 1 - row.constant);
  }
}

llvm::Error RatioLpBuilder::build() {
  if (llvm::Error err = addRatioColumns())
    return err;
  for (unsigned d = 0; d < steps.representative.size(); ++d)
    addStepRows(d);
  addMemoryRows();
  return llvm::Error::success();
}

static Ratios readRatios(const RatioProblem &p, const RatioLpBuilder &b) {
  Ratios ratios(p.segments.size());
  for (unsigned s = 0; s < p.segments.size(); ++s)
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      // Clip simplex noise into the column's domain.
      double r = b.lp.value(b.ratioCol[s][c]);
      ratios[s].push_back(std::clamp(r, 0.0, 1.0 / p.classes[c].count));
    }
  return ratios;
}

static llvm::Error statusError(LinearProgram::Status status,
                               const LinearProgram &lp,
                               const LpOptions &options) {
  if (status == LinearProgram::Status::IterationLimit)
    return makeError(ExitInfeasible,
                     "ratio LP stopped at the iteration limit ({0} "
                     "iterations) with no solution",
                     options.iterationLimit);
  return makeError(ExitInternal,
                   "GLPK failed on the ratio LP ({0} rows, {1} columns, "
                   "status {2})",
                   lp.numRows(), lp.numColumns(), int(status));
}

/// Explains an infeasible LP: at the ratios that minimise the largest
/// relative overflow over the device classes, the class short of the most
/// bytes per device.
static llvm::Error explainInfeasible(const RatioProblem &p,
                                     const CollapsedSteps &steps,
                                     const LpOptions &options) {
  RatioLpBuilder b(p, steps, options, /*elastic=*/true);
  if (llvm::Error err = b.build())
    return err;
  LinearProgram::Status status = b.lp.minimize(options.iterationLimit);
  if (status != LinearProgram::Status::Optimal)
    return memoryError(0, "no sharding ratios satisfy the memory and "
                          "trust-region "
                          "rows");
  if (b.slackCol < 0 || !(b.lp.value(b.slackCol) > 0))
    return memoryError(
        0, "no sharding ratios satisfy the memory rows (numerically "
           "borderline)");
  Ratios ratios = readRatios(p, b);
  int worst = -1;
  double worstLack = 0, worstNeed = 0;
  for (unsigned c = 0; c < p.memory.size(); ++c) {
    if (!std::isfinite(p.classes[c].memoryCapacity))
      continue;
    double need = evaluateMemory(p, c, ratios, ratios);
    if (worst < 0 || need - p.classes[c].memoryCapacity > worstLack) {
      worst = int(c);
      worstLack = need - p.classes[c].memoryCapacity;
      worstNeed = need;
    }
  }
  const DeviceClass &cls = p.classes[worst];
  return memoryError(1 + b.lp.value(b.slackCol),
                     "no sharding ratios fit in memory: the ratios closest to "
                     "fitting still need {0:f2}x the capacity of the fullest "
                     "device class; class '{1}' ({2} devices) lacks the most, "
                     "{3} per device (needs {4}, capacity {5})",
                     1 + b.lp.value(b.slackCol), cls.name, cls.count,
                     formatBytes(worstLack), formatBytes(worstNeed),
                     formatBytes(cls.memoryCapacity));
}

llvm::Expected<RatioSolution>
weft::ratio::solveRatios(const RatioProblem &problem,
                         const LpOptions &options) {
  if (llvm::Error err = problem.check())
    return std::move(err);
  CollapsedSteps steps = collapseSteps(problem);
  RatioLpBuilder b(problem, steps, options, /*elastic=*/false);
  if (llvm::Error err = b.build())
    return std::move(err);
  LinearProgram::Status status = b.lp.minimize(options.iterationLimit);
  if (status == LinearProgram::Status::Infeasible)
    return explainInfeasible(problem, steps, options);
  if (status != LinearProgram::Status::Optimal)
    return statusError(status, b.lp, options);

  RatioSolution solution;
  solution.ratios = readRatios(problem, b);
  solution.objectiveSeconds = b.lp.objective();
  for (unsigned k = 0; k < problem.steps.size(); ++k) {
    unsigned d = steps.distinctOf[k];
    solution.stepCompute.push_back(b.lp.value(b.computeCol[d]));
    solution.stepComm.push_back(b.lp.value(b.commCol[d]));
  }
  solution.numDistinctSteps = steps.representative.size();
  solution.numRows = b.lp.numRows();
  solution.numColumns = b.lp.numColumns();
  return solution;
}
