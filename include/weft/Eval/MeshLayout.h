//===- MeshLayout.h - Devices of a mesh and the shards they hold --*- C++
//-*-===//
//
// Maps an spmd module's mesh onto a cluster and answers the two questions
// every cost of a plan starts from: which devices form a group along some
// mesh axes, and how large a device's shard of a distributed value is.
//
// Shard extents (docs/Evaluator.md): a dim split by `gather(d, s)` on a set
// A of mesh axes is held, on device x, as the sum of the segment's per-device
// shares over the devices that agree with x on every axis of A. A device's
// share is its integer size when the segment has sizes, else its class ratio
// times the extent. Split on every axis this is the device's own share;
// split on the node axis only, a node's share (the sum of its devices');
// split on local axes only, an even part (every local position sums the same
// ratios over the nodes).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_MESHLAYOUT_H
#define WEFT_EVAL_MESHLAYOUT_H

#include "Spmd/IR/SpmdOps.h"
#include "weft/Cluster/ClusterSpec.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace weft {

/// A set of mesh axes as a bit mask (bit a = axis a).
using AxisMask = uint32_t;

class MeshLayout {
public:
  /// Checks that `module`'s mesh fits `spec`: one mesh node per cluster node
  /// in order, each with at least as many devices as the mesh's local size
  /// (extra devices stay idle) and of its class's device type.
  static llvm::Expected<MeshLayout>
  get(mlir::ModuleOp module, const ClusterSpec &spec, bool fold = true);

  unsigned numDevices() const { return numDevices_; }
  unsigned numAxes() const { return axisSizes.size(); }
  int64_t axisSize(unsigned axis) const { return axisSizes[axis]; }
  llvm::ArrayRef<int64_t> sizes() const { return axisSizes; }
  /// Coordinate of mesh device `d` on `axis`.
  int64_t coord(unsigned d, unsigned axis) const { return coords[d][axis]; }
  /// The cluster device id of mesh device `d`.
  unsigned clusterDevice(unsigned d) const { return toCluster[d]; }
  /// Index of `d`'s device class in the mesh.
  unsigned meshClass(unsigned d) const { return classOf[d]; }
  const DeviceType &typeOf(unsigned d) const;
  const ClusterSpec &cluster() const { return *spec; }
  spmd::MeshAttr mesh() const { return meshAttr; }

  /// Mesh devices that agree with `d` on every axis outside `axes`, in
  /// ascending (node-major) order: the group of a collective along `axes`
  /// (from a table built once per `axes`, valid as long as the layout).
  llvm::ArrayRef<unsigned> groupOf(unsigned d, AxisMask axes) const;
  /// The same group as cluster device ids.
  llvm::ArrayRef<unsigned> clusterGroupOf(unsigned d, AxisMask axes) const;
  /// Product of the sizes of `axes`.
  int64_t sizeOf(AxisMask axes) const;

  /// The extent of dim `dim` of a value of type `type` distributed as
  /// `dist` on mesh device `d`.
  int64_t shardExtent(mlir::RankedTensorType type, spmd::DistAttr dist,
                      unsigned dim, unsigned d) const;
  /// Dim `dim`'s shard extent on every mesh device (indexed by device), or
  /// null when `dist` does not split it (every device holds the whole
  /// extent). The array stays valid as long as the layout.
  const int64_t *shardExtents(spmd::DistAttr dist, unsigned dim) const;
  /// The mesh axes on which `dist` splits tensor dim `dim` and the segment
  /// they split it by (0 and -1 when the dim is whole).
  static std::pair<AxisMask, int64_t> splitOf(spmd::DistAttr dist,
                                              unsigned dim);
  /// Every dim's shard extent.
  llvm::SmallVector<int64_t, 4> shardShape(mlir::RankedTensorType type,
                                           spmd::DistAttr dist,
                                           unsigned d) const;

  /// Devices no cost of the plan tells apart, one per orbit (ascending):
  /// two devices share an orbit when they sit at the same local coordinates
  /// of mesh nodes that are alike: of one class, cut from cluster nodes of
  /// one type, device count and links, and holding at every local position
  /// the same extent of every segment on every set of split axes. A group
  /// along axes that include the node axis is then the same for both, and
  /// a group inside a node has members alike one by one, so every compute,
  /// collective and memory figure of the representative holds for the
  /// whole orbit (docs/Evaluator.md). With `fold` false at get(), every
  /// device is its own orbit.
  llvm::ArrayRef<unsigned> representatives() const { return reps; }
  /// The representative of `d`'s orbit.
  unsigned representativeOf(unsigned d) const { return repOf[d]; }
  /// How many devices the orbit of representative `rep` has.
  unsigned orbitSize(unsigned rep) const { return orbitSizes[rep]; }

private:
  const ClusterSpec *spec = nullptr;
  spmd::MeshAttr meshAttr;
  unsigned numDevices_ = 0;
  llvm::SmallVector<int64_t, 4> axisSizes;
  std::vector<llvm::SmallVector<int64_t, 4>> coords;
  std::vector<unsigned> toCluster, classOf;
  /// Orbits (representatives()): members per representative, the
  /// representative per device.
  std::vector<unsigned> reps, repOf, orbitSizes;
  void findOrbits(llvm::ArrayRef<std::pair<unsigned, unsigned>> placement);
  /// Per-device shares of each segment (integer sizes or ratio x extent).
  llvm::DenseMap<int64_t, std::vector<double>> shares;
  /// The groups along each set of axes: per device its group's index, and
  /// per group its members (mesh and cluster ids), built on demand.
  struct Groups {
    std::vector<unsigned> index;
    std::vector<std::vector<unsigned>> members, clusterMembers;
  };
  const Groups &groupsAlong(AxisMask axes) const;
  mutable llvm::DenseMap<AxisMask, Groups> groups;
  /// Per device, the extent of segment `segment` (which has shares) split
  /// on `mask`: a row of `extents`, computed on first use.
  llvm::ArrayRef<int64_t> extentsOf(int64_t segment, AxisMask mask) const;
  /// Shard extents per (segment, axes), one per device, computed on demand.
  mutable llvm::DenseMap<std::pair<int64_t, AxisMask>, std::vector<int64_t>>
      extents;
};

} // namespace weft

#endif // WEFT_EVAL_MESHLAYOUT_H
