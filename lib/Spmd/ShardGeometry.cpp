//===- ShardGeometry.cpp - Shard extents and offsets without a cluster ----===//

#include "weft/Spmd/ShardGeometry.h"
#include "weft/Support/Error.h"
#include <map>

using namespace weft;
using namespace weft::spmd;

llvm::Expected<ShardGeometry> ShardGeometry::get(mlir::ModuleOp module) {
  auto mesh = module->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!mesh)
    return badInput("the plan has no '{0}' attribute",
                    SpmdDialect::kMeshAttr.str());
  llvm::SmallVector<SegmentAttr> segs;
  if (auto arr =
          module->getAttrOfType<mlir::ArrayAttr>(SpmdDialect::kSegmentsAttr))
    for (mlir::Attribute a : arr)
      if (auto seg = a.dyn_cast<SegmentAttr>())
        segs.push_back(seg);
  return get(mesh, segs);
}

llvm::Expected<ShardGeometry>
ShardGeometry::get(MeshAttr mesh, llvm::ArrayRef<SegmentAttr> segs) {
  ShardGeometry g;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    g.axisSizes.push_back(mesh.getAxisSize(a));
  if (g.axisSizes.size() > 31)
    return badInput("the mesh has {0} axes (at most 31)", g.axisSizes.size());
  int64_t n = 1;
  for (int64_t s : g.axisSizes) {
    if (s <= 0)
      return badInput("the mesh has an axis of size {0}", s);
    n *= s;
  }
  g.numDevices_ = n;
  for (int64_t d = 0; d < n; ++d) {
    llvm::SmallVector<int64_t, 4> c(g.axisSizes.size());
    int64_t rest = d;
    for (int a = int(g.axisSizes.size()) - 1; a >= 0; --a) {
      c[a] = rest % g.axisSizes[a];
      rest /= g.axisSizes[a];
    }
    g.coords.push_back(c);
  }
  for (SegmentAttr seg : segs) {
    if (!seg.getSizes())
      return badInput("segment {0} has no integer sizes (integerize the "
                      "plan first)",
                      seg.getId());
    llvm::ArrayRef<int64_t> sz = seg.getSizes().asArrayRef();
    if (int64_t(sz.size()) != n)
      return badInput("segment {0} has {1} sizes for {2} devices", seg.getId(),
                      sz.size(), n);
    int64_t total = 0;
    for (int64_t s : sz) {
      if (s < 0)
        return badInput("segment {0} has a negative size {1}", seg.getId(), s);
      total += s;
    }
    if (total != seg.getExtent())
      return badInput("segment {0}: sizes sum to {1}, extent is {2}",
                      seg.getId(), total, seg.getExtent());
    g.sizes[seg.getId()] = std::vector<int64_t>(sz.begin(), sz.end());
  }
  return g;
}

unsigned ShardGeometry::deviceAt(llvm::ArrayRef<int64_t> c) const {
  int64_t d = 0;
  for (unsigned a = 0; a < axisSizes.size(); ++a)
    d = d * axisSizes[a] + c[a];
  return unsigned(d);
}

llvm::SmallVector<unsigned, 8> ShardGeometry::groupAlong(unsigned d,
                                                         MeshAxes axes) const {
  llvm::SmallVector<unsigned, 8> group;
  for (unsigned y = 0; y < numDevices_; ++y) {
    bool same = true;
    for (unsigned a = 0; a < axisSizes.size() && same; ++a)
      if (!(axes & (1u << a)))
        same = coords[y][a] == coords[d][a];
    if (same)
      group.push_back(y);
  }
  return group;
}

unsigned ShardGeometry::rankInGroup(unsigned d, MeshAxes axes) const {
  unsigned r = 0;
  for (unsigned a = 0; a < axisSizes.size(); ++a)
    if (axes & (1u << a))
      r = r * axisSizes[a] + coords[d][a];
  return r;
}

int64_t ShardGeometry::sizeOf(MeshAxes axes) const {
  int64_t n = 1;
  for (unsigned a = 0; a < axisSizes.size(); ++a)
    if (axes & (1u << a))
      n *= axisSizes[a];
  return n;
}

llvm::ArrayRef<int64_t> ShardGeometry::segmentSizes(int64_t id) const {
  auto it = sizes.find(id);
  if (it == sizes.end())
    return {};
  return it->second;
}

MeshAxes ShardGeometry::splitAxes(DistAttr dist, unsigned dim) {
  MeshAxes m = 0;
  for (auto [a, e] : llvm::enumerate(dist.getAxes()))
    if (e.isGather() && e.dim == int64_t(dim))
      m |= 1u << a;
  return m;
}

MeshAxes ShardGeometry::identityAxes(DistAttr dist) {
  MeshAxes m = 0;
  for (auto [a, e] : llvm::enumerate(dist.getAxes()))
    if (e.isIdentity())
      m |= 1u << a;
  return m;
}

const ShardGeometry::Split &ShardGeometry::splitOf(int64_t segment,
                                                   MeshAxes axes) const {
  auto key = std::make_pair(segment, axes);
  auto it = splits.find(key);
  if (it != splits.end())
    return it->second;
  Split s;
  s.extents.assign(numDevices_, 0);
  s.offsets.assign(numDevices_, 0);
  auto szIt = sizes.find(segment);
  if (szIt != sizes.end()) {
    const std::vector<int64_t> &sz = szIt->second;
    // Group totals keyed by the coordinates on `axes` (axis 0 major).
    std::map<llvm::SmallVector<int64_t, 4>, int64_t> totals;
    auto keyOf = [&](unsigned d) {
      llvm::SmallVector<int64_t, 4> k;
      for (unsigned a = 0; a < axisSizes.size(); ++a)
        if (axes & (1u << a))
          k.push_back(coords[d][a]);
      return k;
    };
    for (unsigned d = 0; d < numDevices_; ++d)
      totals[keyOf(d)] += sz[d];
    std::map<llvm::SmallVector<int64_t, 4>, int64_t> starts;
    int64_t running = 0;
    for (auto &[k, total] : totals) {
      starts[k] = running;
      running += total;
    }
    for (unsigned d = 0; d < numDevices_; ++d) {
      auto k = keyOf(d);
      s.extents[d] = totals[k];
      s.offsets[d] = starts[k];
    }
  }
  return splits.try_emplace(key, std::move(s)).first->second;
}

int64_t ShardGeometry::shardExtent(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                                   unsigned dim, unsigned d) const {
  MeshAxes axes = splitAxes(dist, dim);
  if (!axes)
    return shape[dim];
  int64_t segment = -1;
  for (const AxisDist &e : dist.getAxes())
    if (e.isGather() && e.dim == int64_t(dim))
      segment = e.segment;
  if (!sizes.count(segment))
    return shape[dim];
  return splitOf(segment, axes).extents[d];
}

int64_t ShardGeometry::shardOffset(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                                   unsigned dim, unsigned d) const {
  MeshAxes axes = splitAxes(dist, dim);
  if (!axes)
    return 0;
  int64_t segment = -1;
  for (const AxisDist &e : dist.getAxes())
    if (e.isGather() && e.dim == int64_t(dim))
      segment = e.segment;
  if (!sizes.count(segment))
    return 0;
  return splitOf(segment, axes).offsets[d];
}

ShardBox ShardGeometry::shardBox(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                                 unsigned d) const {
  ShardBox box;
  for (unsigned i = 0; i < shape.size(); ++i) {
    box.extents.push_back(shardExtent(shape, dist, i, d));
    box.offsets.push_back(shardOffset(shape, dist, i, d));
  }
  return box;
}
