//===- SegmentTable.h - Segments of a baseline plan ----------------*- C++
//-*-===//
//
// Creates the segments a baseline needs, with per-class ratios and integer
// sizes per device (largest-remainder rounding; Z3 integerization comes
// later). Integer sizes follow the shard rule of docs/Evaluator.md: a value
// split on a set of axes holds, on each device, the sum of the sizes of the
// devices agreeing with it on those axes. Sizes are therefore rounded per
// position on the split axes, then spread over the devices of a position.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_BASELINES_SEGMENTTABLE_H
#define WEFT_LIB_BASELINES_SEGMENTTABLE_H

#include "Spmd/IR/SpmdAttrs.h"
#include "llvm/ADT/SmallVector.h"
#include <map>
#include <tuple>
#include <vector>

namespace weft::baselines {

/// Ratios per mesh class (counted once per device) and the mesh's shape.
struct MeshShape {
  llvm::SmallVector<int64_t, 4> axisSizes;
  /// Mesh class of every device (node-major).
  std::vector<unsigned> classOfDevice;
  /// Devices per class.
  std::vector<int64_t> devicesPerClass;
  unsigned numDevices() const { return classOfDevice.size(); }
};

class SegmentTable {
public:
  SegmentTable(mlir::MLIRContext *ctx, MeshShape shape)
      : ctx(ctx), shape(std::move(shape)) {}

  /// A segment of `extent` with `ratios` (per class) split on `axes`
  /// (bit mask), sizes multiples of `align`. Equal requests share a segment.
  int64_t get(int64_t extent, llvm::ArrayRef<double> ratios, uint32_t axes,
              int64_t align = 1);
  /// The segment of `parent` scaled by num/den (a reshape merging or
  /// splitting the split dim); -1 when some integer size does not scale.
  int64_t derive(int64_t parent, int64_t num, int64_t den);

  int64_t extentOf(int64_t id) const { return segments[id].getExtent(); }
  /// All segments, ids 0..n-1.
  llvm::ArrayRef<spmd::SegmentAttr> all() const { return segments; }

private:
  mlir::MLIRContext *ctx;
  MeshShape shape;
  std::vector<spmd::SegmentAttr> segments;
  std::map<std::tuple<int64_t, std::vector<double>, uint32_t, int64_t>, int64_t>
      byRequest;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> byDerivation;
};

/// Largest-remainder rounding of `shares` (summing to `total`) to integers
/// summing to `total`; ties go to the lower index.
std::vector<int64_t> largestRemainder(llvm::ArrayRef<double> shares,
                                      int64_t total);

} // namespace weft::baselines

#endif // WEFT_LIB_BASELINES_SEGMENTTABLE_H
