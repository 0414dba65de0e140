//===- Matmul.cpp - Batched matrix product (Eigen) ------------------------===//

#include "weft/Exec/Matmul.h"
#include "Indexing.h"
#include <Eigen/Core>

using namespace weft::exec;

namespace {

using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;

/// The batch walk of a matmul: for each output batch element, the offsets
/// (in matrices) of the lhs and rhs matrices it reads.
struct BatchWalk {
  Shape batch;
  std::vector<int64_t> lhsIndex, rhsIndex;
  /// Whether the rhs has a single matrix shared by every batch element (a
  /// weight): the lhs batch and rows then fold into one GEMM.
  bool rhsShared = true;
  bool lhsShared = true;
};

BatchWalk walkBatches(llvm::ArrayRef<int64_t> lhs,
                      llvm::ArrayRef<int64_t> rhs) {
  llvm::ArrayRef<int64_t> lb = lhs.drop_back(2), rb = rhs.drop_back(2);
  BatchWalk walk;
  walk.batch = broadcastShapes(lb, rb);
  std::array<Shape, 2> strides{broadcastStrides(lb, walk.batch),
                               broadcastStrides(rb, walk.batch)};
  forEachElement<2>(walk.batch, strides,
                    [&](int64_t, std::array<int64_t, 2> off) {
                      walk.lhsIndex.push_back(off[0]);
                      walk.rhsIndex.push_back(off[1]);
                    });
  walk.rhsShared = numElementsOf(rb) == 1;
  walk.lhsShared = numElementsOf(lb) == 1;
  return walk;
}

} // namespace

Tensor weft::exec::matmul(const Tensor &lhs, const Tensor &rhs) {
  llvm::ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape();
  int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
  BatchWalk walk = walkBatches(ls, rs);
  Shape shape = walk.batch;
  shape.append({m, n});
  Tensor out(ElementType::F32, shape);
  if (walk.rhsShared &&
      numElementsOf(ls.drop_back(2)) == int64_t(walk.lhsIndex.size())) {
    int64_t rows = int64_t(walk.lhsIndex.size()) * m;
    Map(out.floats(), rows, n).noalias() =
        ConstMap(lhs.floats(), rows, k) * ConstMap(rhs.floats(), k, n);
    return out;
  }
  for (size_t b = 0; b < walk.lhsIndex.size(); ++b)
    Map(out.floats() + b * m * n, m, n).noalias() =
        ConstMap(lhs.floats() + walk.lhsIndex[b] * m * k, m, k) *
        ConstMap(rhs.floats() + walk.rhsIndex[b] * k * n, k, n);
  return out;
}

BinaryGrads weft::exec::matmulBackward(const Tensor &lhs, const Tensor &rhs,
                                       const Tensor &dResult) {
  llvm::ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape();
  int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
  BatchWalk walk = walkBatches(ls, rs);
  Tensor dl(ElementType::F32, ls), dr(ElementType::F32, rs);
  const float *g = dResult.floats();
  if (walk.rhsShared &&
      numElementsOf(ls.drop_back(2)) == int64_t(walk.lhsIndex.size())) {
    int64_t rows = int64_t(walk.lhsIndex.size()) * m;
    ConstMap dy(g, rows, n), x(lhs.floats(), rows, k), w(rhs.floats(), k, n);
    Map(dl.floats(), rows, k).noalias() = dy * w.transpose();
    Map(dr.floats(), k, n).noalias() = x.transpose() * dy;
    return {std::move(dl), std::move(dr)};
  }
  // Broadcast operands accumulate the contributions of every batch element
  // that read them.
  for (size_t b = 0; b < walk.lhsIndex.size(); ++b) {
    ConstMap dy(g + b * m * n, m, n);
    ConstMap x(lhs.floats() + walk.lhsIndex[b] * m * k, m, k);
    ConstMap w(rhs.floats() + walk.rhsIndex[b] * k * n, k, n);
    Map(dl.floats() + walk.lhsIndex[b] * m * k, m, k).noalias() +=
        dy * w.transpose();
    Map(dr.floats() + walk.rhsIndex[b] * k * n, k, n).noalias() +=
        x.transpose() * dy;
  }
  return {std::move(dl), std::move(dr)};
}
