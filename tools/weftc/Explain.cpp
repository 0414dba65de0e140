//===- Explain.cpp - weftc --explain --------------------------------------===//

#include "Explain.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "weft/Support/Units.h"
#include "llvm/Support/FormatVariadic.h"
#include <numeric>

using namespace weft;
using namespace weft::spmd;

namespace {

struct Row {
  std::string op, location, variant, in, out;
  /// "spmd.all_reduce axis 2: [sum] -> [id], 16 kB, 11 us (+11 us dual)".
  std::vector<std::string> collectives;
  double stepSeconds = 0;
};

std::string distText(mlir::Value v, unsigned numAxes) {
  if (DistAttr d = getDist(v))
    return distToString(d);
  return distToString(DistAttr::replicated(v.getContext(), numAxes));
}

std::string locationOf(mlir::Location loc) {
  if (auto name = loc.dyn_cast<mlir::NameLoc>())
    return name.getName().str();
  return "";
}

} // namespace

void weft::printExplain(mlir::ModuleOp plan, const PlanEstimate &estimate,
                        llvm::raw_ostream &os, unsigned top) {
  MeshAttr mesh = getMesh(plan);
  unsigned numAxes = mesh ? mesh.getNumAxes() : 1;
  std::vector<Row> rows;
  std::vector<std::string> pending;
  size_t nextCollective = 0;
  plan.walk([&](mlir::func::FuncOp main) {
    for (mlir::Operation &op : main.getBody().front()) {
      if (auto local = llvm::dyn_cast<LocalOp>(&op)) {
        Row row;
        for (mlir::Operation &inner : local.getBody().front())
          if (!llvm::isa<YieldOp>(inner))
            row.op = inner.getName().stripDialect().str();
        row.location = locationOf(local.getLoc());
        row.variant = local.getVariant().str();
        if (local.getRecompute())
          row.variant += " +recompute";
        llvm::SmallVector<std::string> ins, outs;
        for (mlir::Value v : local.getInputs())
          ins.push_back(distText(v, numAxes));
        for (mlir::Attribute d : local.getDists())
          outs.push_back(distToString(d));
        row.in = llvm::join(ins, " ");
        row.out = llvm::join(outs, " ");
        row.collectives = std::move(pending);
        pending.clear();
        size_t i = rows.size();
        if (i < estimate.steps.size())
          row.stepSeconds =
              estimate.steps[i].computeSeconds + estimate.steps[i].commSeconds;
        rows.push_back(std::move(row));
        continue;
      }
      if (llvm::isa<ParameterOp, YieldOp>(op) || op.getNumOperands() != 1 ||
          op.getNumResults() != 1 || !llvm::isa<SpmdDialect>(op.getDialect()))
        continue;
      std::string text = llvm::formatv(
          "{0} axis {1}: {2} -> {3}", op.getName().stripDialect(),
          op.getAttrOfType<mlir::IntegerAttr>("axis")
              ? op.getAttrOfType<mlir::IntegerAttr>("axis").getInt()
              : 0,
          distText(op.getOperand(0), numAxes),
          distText(op.getResult(0), numAxes));
      if (nextCollective < estimate.collectives.size()) {
        const CollectiveEstimate &c = estimate.collectives[nextCollective++];
        text += llvm::formatv(", {0}, {1}", formatBytes(c.bytes),
                              formatSeconds(c.forwardSeconds));
        if (c.dualSeconds > 0)
          text += llvm::formatv(" (+{0} dual)", formatSeconds(c.dualSeconds));
      }
      pending.push_back(std::move(text));
    }
  });

  os << "per-op plan (times: the step on its slowest device, forward + "
        "backward + communication; estimates):\n";
  for (auto [i, row] : llvm::enumerate(rows)) {
    os << llvm::formatv("  #{0,-4} {1,-14} {2,10}  {3}  {4} -> {5}  [{6}]\n", i,
                        row.op, formatSeconds(row.stepSeconds), row.variant,
                        row.in, row.out, row.location);
    for (const std::string &c : row.collectives)
      os << "         needs " << c << "\n";
  }
  if (!pending.empty())
    for (const std::string &c : pending)
      os << "         after the last op: " << c << "\n";

  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].stepSeconds > rows[b].stepSeconds;
  });
  // Gradient accumulation: a row is one micro-batch, run m times a step.
  int64_t micro = estimate.microBatches;
  os << llvm::formatv("top {0} steps of {1} (of a {2} step{3}):\n",
                      std::min<size_t>(top, rows.size()), rows.size(),
                      formatSeconds(estimate.stepSeconds),
                      micro > 1 ? llvm::formatv(" of {0} micro-batches; times "
                                                "per micro-batch, shares of "
                                                "the step",
                                                micro)
                                      .str()
                                : std::string());
  for (size_t k = 0; k < std::min<size_t>(top, order.size()); ++k) {
    const Row &r = rows[order[k]];
    double share =
        estimate.stepSeconds > 0
            ? 100 * double(micro) * r.stepSeconds / estimate.stepSeconds
            : 0;
    os << llvm::formatv("  #{0,-4} {1,-14} {2,10} {3,5:F1} %  {4}\n", order[k],
                        r.op, formatSeconds(r.stepSeconds), share, r.location);
  }
}
