//===- ApplyRatios.cpp - Write ratios and integer sizes into a plan -------===//

#include "PlanSegments.h"
#include "weft/Eval/RatioFromPlan.h"
#include "weft/Support/Error.h"
#include <cmath>

using namespace weft;
using namespace weft::ratio;
using namespace weft::spmd;

llvm::Error weft::ratio::applyRatios(mlir::ModuleOp plan, const Ratios &ratios,
                                     const IntegerPlan *sizes) {
  auto segs = analyzeSegments(plan);
  if (!segs)
    return segs.takeError();
  unsigned numClasses = segs->classCounts.size();
  unsigned numSegments = segs->freeGroups.size();
  if (ratios.size() != numSegments)
    return badInput("expected ratios for {0} segment groups, found {1}",
                    numSegments, ratios.size());
  if (sizes && sizes->sizes.size() != numSegments)
    return badInput("expected integer sizes for {0} segment groups, found {1}",
                    numSegments, sizes->sizes.size());
  auto mesh = plan->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  // Mesh device -> (class, index within the class), node-major.
  std::vector<std::pair<unsigned, unsigned>> slot;
  {
    std::vector<unsigned> seen(numClasses, 0);
    for (int64_t node = 0; node < mesh.getNumNodes(); ++node) {
      unsigned c = unsigned(mesh.getClassIndexOfNode(node));
      for (int64_t l = 0; l < mesh.getDevicesPerNode(); ++l)
        slot.push_back({c, seen[c]++});
    }
  }
  mlir::MLIRContext *ctx = plan.getContext();
  llvm::SmallVector<mlir::Attribute> out(segs->segments.begin(),
                                         segs->segments.end());
  for (unsigned s = 0; s < numSegments; ++s) {
    if (ratios[s].size() != numClasses)
      return badInput("segment group {0}: expected {1} ratios, found {2}", s,
                      numClasses, ratios[s].size());
    double total = 0;
    for (unsigned c = 0; c < numClasses; ++c) {
      double r = ratios[s][c];
      if (!std::isfinite(r) || r < -1e-12)
        return badInput("segment group {0}: ratio {1} of class {2} is not a "
                        "non-negative number",
                        s, r, c);
      total += std::max(0.0, r) * segs->classCounts[c];
    }
    if (total <= 0)
      return badInput("segment group {0}: the ratios sum to zero", s);
    llvm::SmallVector<double> normalized;
    for (unsigned c = 0; c < numClasses; ++c)
      normalized.push_back(std::max(0.0, ratios[s][c]) / total);
    const SegmentGroup &group = segs->groups[segs->freeGroups[s]];
    if (sizes) {
      const auto &perClass = sizes->sizes[s];
      bool shape = perClass.size() == numClasses;
      for (unsigned c = 0; shape && c < numClasses; ++c)
        shape = perClass[c].size() == segs->classCounts[c];
      if (!shape)
        return badInput("segment group {0}: the integer sizes do not have one "
                        "entry per device",
                        s);
    }
    for (auto [k, m] : llvm::enumerate(group.members)) {
      SegmentAttr seg = segs->segments[m];
      mlir::DenseI64ArrayAttr sizeAttr;
      if (sizes) {
        int64_t factor = group.factors[k];
        if (factor == 0)
          return badInput("segment {0}: extent {1} is not a multiple of its "
                          "group's extent {2}; integer sizes cannot be written",
                          seg.getId(), seg.getExtent(), group.baseExtent);
        llvm::SmallVector<int64_t> perDevice;
        for (auto [c, i] : slot)
          perDevice.push_back(sizes->sizes[s][c][i] * factor);
        sizeAttr = mlir::DenseI64ArrayAttr::get(ctx, perDevice);
      }
      out[m] = SegmentAttr::get(ctx, seg.getId(), seg.getExtent(),
                                mlir::DenseF64ArrayAttr::get(ctx, normalized),
                                sizeAttr, seg.getAlign());
    }
  }
  plan->setAttr(SpmdDialect::kSegmentsAttr, mlir::ArrayAttr::get(ctx, out));
  return llvm::Error::success();
}
