//===- StepPicture.cpp - What the pictures of a plan's step are made of ---===//

#include "weft/Emit/StepPicture.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Emit/Timeline.h"
#include "weft/Emit/Trace.h"
#include "weft/Support/FileOutput.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cmath>
#include <map>

using namespace weft;

namespace {

/// The segment splitting the most values of the plan (function arguments
/// and op results), or null.
spmd::SegmentAttr mainSegment(mlir::ModuleOp plan) {
  std::map<int64_t, unsigned> uses;
  auto count = [&](mlir::Value v) {
    spmd::DistAttr dist = spmd::getDist(v);
    if (!dist)
      return;
    llvm::SmallVector<int64_t, 4> seen;
    for (const spmd::AxisDist &a : dist.getAxes())
      if (a.isGather() && !llvm::is_contained(seen, a.segment))
        seen.push_back(a.segment);
    for (int64_t s : seen)
      ++uses[s];
  };
  plan.walk([&](mlir::func::FuncOp f) {
    if (f.isExternal())
      return;
    llvm::for_each(f.getArguments(), count);
    for (mlir::Operation &op : f.getBody().front())
      llvm::for_each(op.getResults(), count);
  });
  int64_t best = -1;
  unsigned most = 0;
  for (auto [segment, n] : uses)
    if (n > most) {
      best = segment;
      most = n;
    }
  return best < 0 ? spmd::SegmentAttr() : spmd::lookupSegment(plan, best);
}

/// Fills eventRanges and groups: priced devices of one class and ratio
/// with the same events (to a billionth of the step) form a group.
void groupDevices(StepPicture &p) {
  const StepEvents &se = p.step.events;
  std::map<unsigned, unsigned> indexOf;
  for (auto [i, dev] : llvm::enumerate(se.devices))
    indexOf[dev.device] = i;
  p.eventRanges.assign(se.devices.size(), {0, 0});
  for (size_t e = 0; e < se.events.size();) {
    size_t end = e;
    while (end < se.events.size() &&
           se.events[end].device == se.events[e].device)
      ++end;
    p.eventRanges[indexOf[se.events[e].device]] = {e, end};
    e = end;
  }
  double span = std::max(se.endSeconds, 1e-30);
  auto at = [&](double seconds) { return std::llround(seconds / span * 1e9); };
  std::map<std::vector<int64_t>, size_t> groups;
  for (auto [i, dev] : llvm::enumerate(se.devices)) {
    std::vector<int64_t> key{int64_t(dev.meshClass),
                             std::llround(p.ratios[i] * 1e9)};
    for (const StepEvent &e : eventsOf(p, i))
      key.insert(key.end(), {int64_t(e.kind), int64_t(e.overlapped),
                             at(e.startSeconds), at(e.durationSeconds)});
    auto [it, fresh] = groups.try_emplace(key, p.groups.size());
    if (fresh)
      p.groups.push_back({unsigned(i), {}});
    llvm::append_range(p.groups[it->second].devices, dev.orbit);
  }
  for (LaneGroup &g : p.groups)
    llvm::sort(g.devices);
  llvm::sort(p.groups, [](const LaneGroup &a, const LaneGroup &b) {
    return a.devices.front() < b.devices.front();
  });
}

} // namespace

llvm::Expected<StepPicture> weft::pictureOf(mlir::ModuleOp plan,
                                            const ClusterSpec &spec,
                                            const EvalOptions &options,
                                            llvm::StringRef subject) {
  auto step = evaluatePlanEvents(plan, spec, options);
  if (!step)
    return step.takeError();
  StepPicture out;
  out.step = std::move(*step);
  out.cluster = spec.name;
  out.dtype = toString(options.dtype).str();
  out.title = llvm::formatv("{0} on {1}, {2}", subject, spec.name, out.dtype);
  out.reservedMemoryFraction = options.reservedMemoryFraction;
  for (const Node &node : spec.nodes)
    out.nodeNames.push_back(node.name);
  spmd::SegmentAttr segment = mainSegment(plan);
  for (const EventDevice &dev : out.step.events.devices) {
    double ratio = -1;
    if (segment && segment.getSizes() && dev.device < segment.getSizes().size())
      ratio = double(segment.getSizes()[dev.device]) /
              double(std::max<int64_t>(1, segment.getExtent()));
    else if (segment && dev.meshClass < segment.getRatios().size())
      ratio = segment.getRatios()[dev.meshClass];
    out.ratios.push_back(ratio);
  }
  groupDevices(out);
  return out;
}

llvm::ArrayRef<StepEvent> weft::eventsOf(const StepPicture &picture,
                                         unsigned index) {
  auto [first, last] = picture.eventRanges[index];
  return llvm::ArrayRef<StepEvent>(picture.step.events.events)
      .slice(first, last - first);
}

std::string weft::deviceLabel(const StepPicture &picture, unsigned index) {
  const std::string &type = picture.step.events.devices[index].type;
  double ratio = picture.ratios[index];
  if (ratio < 0)
    return type;
  return llvm::formatv("{0}, ratio {1:F3}", type, ratio).str();
}

llvm::Error weft::writeStepPictures(llvm::StringRef dir, mlir::ModuleOp plan,
                                    const ClusterSpec &spec,
                                    const EvalOptions &options,
                                    llvm::StringRef subject) {
  auto picture = pictureOf(plan, spec, options, subject);
  if (!picture)
    return picture.takeError();
  llvm::SmallString<128> svg(dir), trace(dir);
  llvm::sys::path::append(svg, "timeline.svg");
  llvm::sys::path::append(trace, "trace.json");
  if (auto err = writeFile(
          svg, [&](llvm::raw_ostream &os) { writeTimelineSVG(*picture, os); }))
    return err;
  return writeFile(
      trace, [&](llvm::raw_ostream &os) { writeTraceJSON(*picture, os); });
}
