//===- ShardGeometry.h - Shard extents and offsets without a cluster -*- C++
//-*-===//
//
// Which piece of a distributed value each mesh device holds, from the
// module's mesh and integer segment sizes alone (no cluster spec): the
// reference interpreter shards values with it and the property tests check
// plans against it.
//
// Devices are numbered node-major (device n·L + local index, the local index
// row-major over the local factors). A dim split by `gather(d, s)` on a set A
// of mesh axes is held by device x as the sum of segment s's per-device
// sizes over the devices that agree with x on every axis of A; its global
// offset is the sum of the same totals over the groups (devices keyed by
// their coordinates on A, ordered lexicographically, axis 0 major) that
// precede x's group. Dims not split on any axis are whole (offset 0).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_SHARDGEOMETRY_H
#define WEFT_SPMD_SHARDGEOMETRY_H

#include "Spmd/IR/SpmdOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace weft::spmd {

/// A set of mesh axes as a bit mask (bit a = axis a).
using MeshAxes = uint32_t;

/// The piece of a value one device holds: per dim, offset and extent in the
/// global tensor.
struct ShardBox {
  llvm::SmallVector<int64_t, 4> offsets, extents;
};

class ShardGeometry {
public:
  /// From `module`'s `spmd.mesh` and `spmd.segments`. Errors (exit code 1):
  /// no mesh, a segment without integer sizes, sizes that are negative, of
  /// the wrong count or do not sum to the extent.
  static llvm::Expected<ShardGeometry> get(mlir::ModuleOp module);
  /// From a mesh and its segments directly.
  static llvm::Expected<ShardGeometry> get(MeshAttr mesh,
                                           llvm::ArrayRef<SegmentAttr> segs);

  unsigned numDevices() const { return numDevices_; }
  unsigned numAxes() const { return axisSizes.size(); }
  int64_t axisSize(unsigned axis) const { return axisSizes[axis]; }
  /// Coordinate of device `d` on `axis`.
  int64_t coord(unsigned d, unsigned axis) const { return coords[d][axis]; }
  /// The device at `coordinates` (one per axis).
  unsigned deviceAt(llvm::ArrayRef<int64_t> coordinates) const;
  /// Devices that agree with `d` on every axis outside `axes`, ascending:
  /// the group of a collective along `axes` (contains `d`).
  llvm::SmallVector<unsigned, 8> groupAlong(unsigned d, MeshAxes axes) const;
  /// Position of `d` in its group along `axes`.
  unsigned rankInGroup(unsigned d, MeshAxes axes) const;
  /// Product of the sizes of `axes`.
  int64_t sizeOf(MeshAxes axes) const;

  /// The per-device integer sizes of segment `id` (empty when unknown).
  llvm::ArrayRef<int64_t> segmentSizes(int64_t id) const;

  /// The mesh axes on which `dist` splits tensor dim `dim`.
  static MeshAxes splitAxes(DistAttr dist, unsigned dim);
  /// The mesh axes whose entry in `dist` is `id`.
  static MeshAxes identityAxes(DistAttr dist);

  /// Extent and global offset of dim `dim` of a value of global shape
  /// `shape` distributed as `dist`, on device `d`.
  int64_t shardExtent(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                      unsigned dim, unsigned d) const;
  int64_t shardOffset(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                      unsigned dim, unsigned d) const;
  /// Every dim's extent (the shard's shape) and offset.
  ShardBox shardBox(llvm::ArrayRef<int64_t> shape, DistAttr dist,
                    unsigned d) const;

private:
  struct Split {
    std::vector<int64_t> extents, offsets;
  };
  const Split &splitOf(int64_t segment, MeshAxes axes) const;

  unsigned numDevices_ = 0;
  llvm::SmallVector<int64_t, 4> axisSizes;
  std::vector<llvm::SmallVector<int64_t, 4>> coords;
  llvm::DenseMap<int64_t, std::vector<int64_t>> sizes;
  mutable llvm::DenseMap<std::pair<int64_t, MeshAxes>, Split> splits;
};

} // namespace weft::spmd

#endif // WEFT_SPMD_SHARDGEOMETRY_H
