//===- MeshLayout.cpp - Devices of a mesh and the shards they hold --------===//

#include "weft/Eval/MeshLayout.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <map>

using namespace weft;
using namespace weft::spmd;

llvm::Expected<MeshLayout> MeshLayout::get(mlir::ModuleOp module,
                                           const ClusterSpec &spec, bool fold) {
  MeshAttr mesh = module->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!mesh)
    return badInput("the plan has no mesh: expected a '{0}' module attribute",
                    SpmdDialect::kMeshAttr.str());
  MeshLayout layout;
  layout.spec = &spec;
  layout.meshAttr = mesh;
  int64_t numNodes = mesh.getNumNodes();
  int64_t perNode = mesh.getDevicesPerNode();
  // Mesh node -> (cluster node, first local rank). One mesh node per
  // cluster node (devices beyond the mesh's local size stay idle), or every
  // cluster node cut into mesh nodes of `perNode` devices (docs/Evaluator.md).
  std::vector<std::pair<unsigned, unsigned>> placement;
  // A pipeline stage (docs/Pipeline.md) names its nodes in the pipelined
  // plan's mesh: mesh node i is that mesh's node nodes[i] — a cluster node,
  // or, when the plan's mesh cuts cluster nodes into mesh nodes of
  // `perNode` devices, one such cut.
  if (auto nodes = module->getAttrOfType<mlir::DenseI64ArrayAttr>(
          SpmdDialect::kNodesAttr)) {
    if (int64_t(nodes.size()) != numNodes)
      return badInput("the stage's mesh has {0} nodes, 'spmd.nodes' lists {1}",
                      numNodes, nodes.size());
    auto parent = module->getParentOfType<mlir::ModuleOp>();
    MeshAttr whole =
        parent ? parent->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr)
               : MeshAttr();
    std::vector<std::pair<unsigned, unsigned>> cuts;
    if (whole && whole.getNumNodes() != int64_t(spec.numNodes()))
      for (unsigned n = 0; n < spec.numNodes(); ++n)
        for (unsigned r = 0; r + perNode <= spec.nodes[n].numDevices;
             r += perNode)
          cuts.push_back({n, r});
    int64_t limit = cuts.empty() ? int64_t(spec.numNodes()) : cuts.size();
    for (int64_t n : nodes.asArrayRef()) {
      if (n < 0 || n >= limit)
        return badInput("the stage's node {0} is not a node of the cluster "
                        "'{1}' ({2} nodes)",
                        n, spec.name, limit);
      placement.push_back(cuts.empty() ? std::pair{unsigned(n), 0u} : cuts[n]);
    }
  } else if (numNodes == int64_t(spec.numNodes())) {
    for (unsigned n = 0; n < spec.numNodes(); ++n)
      placement.push_back({n, 0});
  } else {
    for (unsigned n = 0; n < spec.numNodes(); ++n)
      for (unsigned r = 0; r + perNode <= spec.nodes[n].numDevices;
           r += perNode)
        placement.push_back({n, r});
    if (int64_t(placement.size()) != numNodes)
      return badInput("the plan's mesh has {0} nodes of {1} devices; the "
                      "cluster '{2}' has {3} nodes and cuts into {4} such",
                      numNodes, perNode, spec.name, spec.numNodes(),
                      placement.size());
  }
  layout.axisSizes.push_back(numNodes);
  for (int64_t f : mesh.getLocal().asArrayRef())
    layout.axisSizes.push_back(f);
  // The class of each mesh node in one pass (the first class listing it,
  // as MeshAttr::getClassIndexOfNode, which scans the classes per node).
  std::vector<int64_t> classOfNode(numNodes, -1);
  for (auto [i, a] : llvm::enumerate(mesh.getClasses()))
    for (int64_t n : a.cast<DeviceClassAttr>().getNodes().asArrayRef())
      if (n >= 0 && n < numNodes && classOfNode[n] < 0)
        classOfNode[n] = i;
  for (int64_t n = 0; n < numNodes; ++n) {
    auto [clusterNode, firstRank] = placement[n];
    const Node &node = spec.nodes[clusterNode];
    int64_t classIndex = classOfNode[n];
    DeviceClassAttr cls =
        classIndex < 0 ? DeviceClassAttr()
                       : mesh.getClasses()[classIndex].cast<DeviceClassAttr>();
    if (int64_t(node.numDevices) < perNode)
      return badInput("mesh node {0} has {1} devices but cluster node '{2}' "
                      "has {3}",
                      n, perNode, node.name, node.numDevices);
    if (!cls.getType().equals_insensitive(node.deviceType))
      return badInput("mesh node {0} is of type {1} but cluster node '{2}' "
                      "has {3} devices",
                      n, cls.getType().str(), node.name, node.deviceType);
    for (int64_t l = 0; l < perNode; ++l) {
      llvm::SmallVector<int64_t, 4> c{n};
      int64_t rest = l;
      for (unsigned a = layout.axisSizes.size() - 1; a >= 1; --a) {
        c.insert(c.begin() + 1, rest % layout.axisSizes[a]);
        rest /= layout.axisSizes[a];
      }
      layout.coords.push_back(c);
      layout.toCluster.push_back(node.firstDevice + firstRank + l);
      layout.classOf.push_back(classIndex);
    }
  }
  layout.numDevices_ = layout.coords.size();
  if (auto segments =
          module->getAttrOfType<mlir::ArrayAttr>(SpmdDialect::kSegmentsAttr))
    for (mlir::Attribute a : segments) {
      auto seg = a.cast<SegmentAttr>();
      std::vector<double> s(layout.numDevices_);
      for (unsigned d = 0; d < layout.numDevices_; ++d)
        s[d] = seg.getSizes() ? double(seg.getSizes()[d])
                              : seg.getRatios()[layout.classOf[d]] *
                                    double(seg.getExtent());
      layout.shares[seg.getId()] = std::move(s);
    }
  if (fold) {
    layout.findOrbits(placement);
  } else {
    for (unsigned d = 0; d < layout.numDevices_; ++d)
      layout.reps.push_back(d);
    layout.repOf = layout.reps;
    layout.orbitSizes.assign(layout.numDevices_, 1);
  }
  return layout;
}

void MeshLayout::findOrbits(
    llvm::ArrayRef<std::pair<unsigned, unsigned>> placement) {
  int64_t perNode = numDevices_ / axisSizes[0];
  // What tells mesh nodes apart: class, the cluster node's type, size and
  // links, and per local position every segment's extent on every set of
  // split axes (the sums over agreeing devices, as shardExtents).
  std::vector<std::vector<double>> nodeKeys(axisSizes[0]);
  for (int64_t m = 0; m < axisSizes[0]; ++m) {
    const Node &node = spec->nodes[placement[m].first];
    nodeKeys[m] = {double(classOf[m * perNode]),
                   double(node.typeIndex),
                   double(node.numDevices),
                   node.intraBandwidthGBps,
                   node.intraLatencyUs,
                   node.nicBandwidthGbps,
                   node.nicLatencyUs};
  }
  AxisMask all = (AxisMask(1) << numAxes()) - 1;
  std::vector<int64_t> ids;
  for (auto &[id, share] : shares)
    ids.push_back(id);
  llvm::sort(ids);
  for (int64_t id : ids)
    for (AxisMask mask = 1; mask <= all; ++mask) {
      llvm::ArrayRef<int64_t> extent = extentsOf(id, mask);
      for (unsigned x = 0; x < numDevices_; ++x)
        nodeKeys[x / perNode].push_back(double(extent[x]));
    }
  std::map<std::vector<double>, unsigned> nodeClass;
  std::vector<unsigned> nodeOrbit(axisSizes[0]);
  for (int64_t m = 0; m < axisSizes[0]; ++m)
    nodeOrbit[m] =
        nodeClass.try_emplace(nodeKeys[m], unsigned(nodeClass.size()))
            .first->second;
  // A device's orbit: its node's and its local position.
  std::map<std::pair<unsigned, int64_t>, unsigned> first;
  repOf.resize(numDevices_);
  orbitSizes.assign(numDevices_, 0);
  for (unsigned d = 0; d < numDevices_; ++d) {
    auto [it, fresh] =
        first.try_emplace({nodeOrbit[d / perNode], d % perNode}, d);
    if (fresh)
      reps.push_back(d);
    repOf[d] = it->second;
    ++orbitSizes[it->second];
  }
}

const DeviceType &MeshLayout::typeOf(unsigned d) const {
  return spec->typeOf(toCluster[d]);
}

const MeshLayout::Groups &MeshLayout::groupsAlong(AxisMask axes) const {
  auto [it, inserted] = groups.try_emplace(axes);
  Groups &g = it->second;
  if (!inserted)
    return g;
  // Devices agreeing on every axis outside `axes` share a group.
  std::map<llvm::SmallVector<int64_t, 4>, unsigned> byOutside;
  g.index.resize(numDevices_);
  for (unsigned d = 0; d < numDevices_; ++d) {
    llvm::SmallVector<int64_t, 4> outside;
    for (unsigned a = 0; a < numAxes(); ++a)
      if (!(axes & (1u << a)))
        outside.push_back(coords[d][a]);
    auto [slot, fresh] = byOutside.try_emplace(outside, g.members.size());
    if (fresh) {
      g.members.emplace_back();
      g.clusterMembers.emplace_back();
    }
    g.index[d] = slot->second;
    g.members[slot->second].push_back(d);
    g.clusterMembers[slot->second].push_back(toCluster[d]);
  }
  return g;
}

llvm::ArrayRef<unsigned> MeshLayout::groupOf(unsigned d, AxisMask axes) const {
  const Groups &g = groupsAlong(axes);
  return g.members[g.index[d]];
}

llvm::ArrayRef<unsigned> MeshLayout::clusterGroupOf(unsigned d,
                                                    AxisMask axes) const {
  const Groups &g = groupsAlong(axes);
  return g.clusterMembers[g.index[d]];
}

int64_t MeshLayout::sizeOf(AxisMask axes) const {
  int64_t n = 1;
  for (unsigned a = 0; a < numAxes(); ++a)
    if (axes & (1u << a))
      n *= axisSizes[a];
  return n;
}

int64_t MeshLayout::shardExtent(mlir::RankedTensorType type, DistAttr dist,
                                unsigned dim, unsigned d) const {
  const int64_t *perDevice = shardExtents(dist, dim);
  return perDevice ? perDevice[d] : type.getDimSize(dim);
}

std::pair<AxisMask, int64_t> MeshLayout::splitOf(DistAttr dist, unsigned dim) {
  AxisMask mask = 0;
  int64_t segment = -1;
  for (auto [a, entry] : llvm::enumerate(dist.getAxes()))
    if (entry.isGather() && entry.dim == int64_t(dim)) {
      mask |= 1u << a;
      segment = entry.segment;
    }
  return {mask, segment};
}

const int64_t *MeshLayout::shardExtents(DistAttr dist, unsigned dim) const {
  auto [mask, segment] = splitOf(dist, dim);
  if (!mask || !shares.count(segment))
    return nullptr;
  return extentsOf(segment, mask).data();
}

llvm::ArrayRef<int64_t> MeshLayout::extentsOf(int64_t segment,
                                              AxisMask mask) const {
  auto [it, inserted] = extents.try_emplace({segment, mask});
  if (inserted) {
    // Summing over the devices that agree on the split axes: those are the
    // devices whose pieces this device holds, the group along the other
    // axes.
    const std::vector<double> &share = shares.find(segment)->second;
    AxisMask all = (AxisMask(1) << numAxes()) - 1;
    const Groups &g = groupsAlong(all & ~mask);
    std::vector<double> sums(g.members.size(), 0.0);
    for (unsigned y = 0; y < numDevices_; ++y)
      sums[g.index[y]] += share[y];
    std::vector<int64_t> &out = it->second;
    out.resize(numDevices_);
    for (unsigned x = 0; x < numDevices_; ++x)
      out[x] = std::max<int64_t>(0, std::llround(sums[g.index[x]]));
  }
  // The vector's buffer stays put when the map grows.
  return it->second;
}

llvm::SmallVector<int64_t, 4>
MeshLayout::shardShape(mlir::RankedTensorType type, DistAttr dist,
                       unsigned d) const {
  llvm::SmallVector<int64_t, 4> dims;
  for (unsigned i = 0; i < type.getRank(); ++i)
    dims.push_back(dist ? shardExtent(type, dist, i, d) : type.getDimSize(i));
  return dims;
}
