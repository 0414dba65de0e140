//===- SegmentTable.h - The segments of a plan being built --------*- C++
//-*-===//
//
// Creates and deduplicates the segments (`#spmd.segment`) a plan needs, with
// per-class ratios and integer sizes per device. Sizes follow the shard rule
// of include/weft/Spmd/ShardGeometry.h: a value split on a set of axes holds,
// on each device, the sum of the sizes of the devices agreeing with it on
// those axes. `get` therefore rounds per position on the split axes
// (largest remainder), then spreads a position's share over its devices.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_SEGMENTTABLE_H
#define WEFT_SPMD_SEGMENTTABLE_H

#include "Spmd/IR/SpmdAttrs.h"
#include "llvm/ADT/SmallVector.h"
#include <map>
#include <tuple>
#include <vector>

namespace weft::spmd {

/// The shape of a mesh: axis sizes and the class of every device.
struct MeshShape {
  llvm::SmallVector<int64_t, 4> axisSizes;
  /// Mesh class of every device (node-major).
  std::vector<unsigned> classOfDevice;
  /// Devices per class.
  std::vector<int64_t> devicesPerClass;
  unsigned numDevices() const { return classOfDevice.size(); }
  /// The shape of `mesh`.
  static MeshShape of(MeshAttr mesh);
};

/// The class index of each mesh node 0..getNumNodes()-1 (-1 where no class
/// lists it): MeshAttr::getClassIndexOfNode for all nodes in one pass, not
/// a pass over the classes per node.
std::vector<int64_t> classIndexOfNodes(MeshAttr mesh);

/// The segments of one plan, ids 0..n-1.
class SegmentTable {
public:
  SegmentTable(mlir::MLIRContext *ctx, MeshShape shape,
               llvm::ArrayRef<SegmentAttr> initial = {});

  /// A segment of `extent` with `ratios` (per class, once per device) split
  /// on the axes of the bit mask `axes`, sizes multiples of `align` (1 when
  /// `extent` is not a multiple). Equal requests share a segment.
  int64_t get(int64_t extent, llvm::ArrayRef<double> ratios, uint32_t axes,
              int64_t align = 1);
  /// The segment with exactly these fields (found or created).
  int64_t add(int64_t extent, llvm::ArrayRef<double> ratios,
              llvm::ArrayRef<int64_t> sizes, int64_t align);
  /// The segment holding, on every device, as many units of `align` as
  /// segment `id` holds units of its `unit` (same ratios): the other split
  /// dims of a sharding variant (e.g. both sides of a reshape). -1 when the
  /// unit counts differ or a size is not a multiple of `unit`.
  int64_t scaled(int64_t id, int64_t unit, int64_t extent, int64_t align);

  SegmentAttr at(int64_t id) const { return segments[id]; }
  int64_t extentOf(int64_t id) const { return segments[id].getExtent(); }
  size_t size() const { return segments.size(); }
  /// All segments, ids 0..n-1.
  llvm::ArrayRef<SegmentAttr> all() const { return segments; }
  const MeshShape &mesh() const { return shape; }

private:
  mlir::MLIRContext *ctx;
  MeshShape shape;
  std::vector<SegmentAttr> segments;
  std::map<std::tuple<int64_t, std::vector<double>, uint32_t, int64_t>, int64_t>
      byRequest;
};

/// Largest-remainder rounding of `shares` (summing to `total`) to integers
/// summing to `total`; ties go to the lower index.
std::vector<int64_t> largestRemainder(llvm::ArrayRef<double> shares,
                                      int64_t total);

} // namespace weft::spmd

#endif // WEFT_SPMD_SEGMENTTABLE_H
