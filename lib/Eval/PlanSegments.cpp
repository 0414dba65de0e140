//===- PlanSegments.cpp - Segment groups of an spmd plan ------------------===//

#include "PlanSegments.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include <numeric>

using namespace weft;
using namespace weft::ratio;
using namespace weft::spmd;

mlir::Operation *weft::ratio::planFunction(mlir::ModuleOp plan) {
  mlir::func::FuncOp func;
  for (auto f : plan.getOps<mlir::func::FuncOp>())
    if (!f.isExternal() && (!func || f.getName() == "main"))
      func = f;
  return func;
}

llvm::Expected<PlanSegments> weft::ratio::analyzeSegments(mlir::ModuleOp plan) {
  PlanSegments out;
  auto mesh = plan->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!mesh)
    return badInput("the plan has no mesh: expected a '{0}' module attribute",
                    SpmdDialect::kMeshAttr.str());
  for (mlir::Attribute a : mesh.getClasses())
    out.classCounts.push_back(
        unsigned(a.cast<DeviceClassAttr>().getNodes().size() *
                 mesh.getDevicesPerNode()));
  if (auto segs =
          plan->getAttrOfType<mlir::ArrayAttr>(SpmdDialect::kSegmentsAttr))
    for (mlir::Attribute a : segs) {
      auto seg = a.dyn_cast<SegmentAttr>();
      if (!seg)
        return badInput("spmd.segments holds a non-segment attribute");
      out.indexOfId[seg.getId()] = out.segments.size();
      out.segments.push_back(seg);
    }
  auto *func = planFunction(plan);
  if (!func)
    return badInput("the plan has no function to evaluate");

  unsigned numSegments = out.segments.size();
  llvm::EquivalenceClasses<unsigned> tied;
  for (unsigned i = 0; i < numSegments; ++i)
    tied.insert(i);
  std::vector<bool> onNodeAxis(numSegments, false);
  std::string unknown;
  // Records every gather of `dist`; returns the segment index per axis.
  auto visit = [&](DistAttr dist) {
    llvm::SmallVector<int, 4> perAxis;
    if (!dist)
      return perAxis;
    for (auto [a, e] : llvm::enumerate(dist.getAxes())) {
      perAxis.push_back(-1);
      if (!e.isGather())
        continue;
      auto it = out.indexOfId.find(e.segment);
      if (it == out.indexOfId.end()) {
        unknown = std::to_string(e.segment);
        continue;
      }
      perAxis.back() = int(it->second);
      if (a == 0)
        onNodeAxis[it->second] = true;
    }
    return perAxis;
  };
  auto &body = llvm::cast<mlir::func::FuncOp>(func).getBody();
  for (mlir::Value arg : body.getArguments())
    visit(getDist(arg));
  for (mlir::Operation &op : body.front()) {
    llvm::SmallVector<llvm::SmallVector<int, 4>> seen;
    for (mlir::Value r : op.getResults())
      seen.push_back(visit(getDist(r)));
    if (!llvm::isa<LocalOp>(op))
      continue;
    for (mlir::Value in : op.getOperands())
      seen.push_back(visit(getDist(in)));
    // A local keeps the shares of every split it sees on one axis.
    for (const auto &a : seen)
      for (const auto &b : seen)
        for (unsigned axis = 0; axis < std::min(a.size(), b.size()); ++axis)
          if (a[axis] >= 0 && b[axis] >= 0)
            tied.unionSets(unsigned(a[axis]), unsigned(b[axis]));
  }
  if (!unknown.empty())
    return badInput("a distribution names segment {0}, which spmd.segments "
                    "does not define",
                    unknown);

  out.groupOf.assign(numSegments, 0);
  llvm::DenseMap<unsigned, unsigned> groupOfLeader;
  for (unsigned i = 0; i < numSegments; ++i) {
    unsigned leader = tied.getLeaderValue(i);
    auto [it, inserted] = groupOfLeader.try_emplace(leader, out.groups.size());
    if (inserted)
      out.groups.emplace_back();
    out.groupOf[i] = it->second;
    out.groups[it->second].members.push_back(i);
    out.groups[it->second].free |= onNodeAxis[i];
  }
  for (SegmentGroup &g : out.groups) {
    g.baseExtent = out.segments[g.members[0]].getExtent();
    for (unsigned m : g.members)
      g.baseExtent = std::min(g.baseExtent, out.segments[m].getExtent());
    g.baseExtent = std::max<int64_t>(1, g.baseExtent);
    int64_t align = 1;
    for (unsigned m : g.members) {
      int64_t e = out.segments[m].getExtent();
      int64_t f = e % g.baseExtent == 0 ? e / g.baseExtent : 0;
      g.factors.push_back(f);
      int64_t own = std::max<int64_t>(1, out.segments[m].getAlign());
      if (f > 0)
        align = std::lcm(align, own / std::gcd(own, f));
    }
    g.alignment = g.baseExtent % align == 0 ? align : 1;
  }
  for (unsigned g = 0; g < out.groups.size(); ++g) {
    out.problemIndex.push_back(out.groups[g].free ? int(out.freeGroups.size())
                                                  : -1);
    if (out.groups[g].free)
      out.freeGroups.push_back(g);
  }
  return out;
}
