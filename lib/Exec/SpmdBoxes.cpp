//===- SpmdBoxes.cpp - Boxes of global tensors and collectives ------------===//

#include "weft/Exec/SpmdKernels.h"
#include <algorithm>
#include <limits>

using namespace weft;
using namespace weft::exec;
using spmd::ShardBox;

namespace {

template <typename T> void merge(T *dst, const T *src, int64_t n, Combine how) {
  switch (how) {
  case Combine::Copy:
    std::copy(src, src + n, dst);
    return;
  case Combine::Add:
    for (int64_t i = 0; i < n; ++i)
      dst[i] += src[i];
    return;
  case Combine::Max:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::max(dst[i], src[i]);
    return;
  }
}

} // namespace

void weft::exec::transferBox(const Tensor &src, const ShardBox &srcBox,
                             Tensor &dst, const ShardBox &dstBox, Combine how) {
  int64_t rank = dst.getRank();
  if (rank == 0) {
    if (src.isFloat())
      merge(dst.floats(), src.floats(), 1, how);
    else
      merge(dst.ints(), src.ints(), 1, how);
    return;
  }
  // The intersection, in global coordinates.
  llvm::SmallVector<int64_t, 4> lo(rank), len(rank);
  for (int64_t i = 0; i < rank; ++i) {
    lo[i] = std::max(srcBox.offsets[i], dstBox.offsets[i]);
    int64_t hi = std::min(srcBox.offsets[i] + srcBox.extents[i],
                          dstBox.offsets[i] + dstBox.extents[i]);
    len[i] = hi - lo[i];
    if (len[i] <= 0)
      return;
  }
  Shape srcStrides = stridesOf(src.getShape());
  Shape dstStrides = stridesOf(dst.getShape());
  int64_t run = len[rank - 1];
  llvm::SmallVector<int64_t, 4> idx(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (int64_t i = 0; i < rank; ++i) {
      s += (lo[i] + idx[i] - srcBox.offsets[i]) * srcStrides[i];
      d += (lo[i] + idx[i] - dstBox.offsets[i]) * dstStrides[i];
    }
    if (src.isFloat())
      merge(dst.floats() + d, src.floats() + s, run, how);
    else
      merge(dst.ints() + d, src.ints() + s, run, how);
    int64_t i = rank - 2;
    for (; i >= 0; --i) {
      if (++idx[i] < len[i])
        break;
      idx[i] = 0;
    }
    if (i < 0)
      return;
  }
}

Tensor weft::exec::extractBox(const Tensor &whole, const ShardBox &box) {
  Tensor out(whole.getElementType(), box.extents);
  ShardBox all;
  all.offsets.assign(whole.getRank(), 0);
  all.extents.assign(whole.getShape().begin(), whole.getShape().end());
  transferBox(whole, all, out, box, Combine::Copy);
  return out;
}

std::vector<Tensor> weft::exec::exchange(const spmd::ShardGeometry &g,
                                         llvm::ArrayRef<int64_t> shape,
                                         ElementType type,
                                         llvm::ArrayRef<Tensor> in,
                                         spmd::DistAttr from, spmd::DistAttr to,
                                         spmd::MeshAxes axes, Exchange how) {
  unsigned n = g.numDevices();
  std::vector<ShardBox> fromBoxes(n);
  for (unsigned d = 0; d < n; ++d)
    fromBoxes[d] = g.shardBox(shape, from, d);
  std::vector<Tensor> out(n);
  for (unsigned x = 0; x < n; ++x) {
    ShardBox box = g.shardBox(shape, to, x);
    Tensor t(type, box.extents);
    if (how == Exchange::Own) {
      transferBox(in[x], fromBoxes[x], t, box, Combine::Copy);
    } else {
      Combine c = how == Exchange::Copy  ? Combine::Copy
                  : how == Exchange::Add ? Combine::Add
                                         : Combine::Max;
      if (how == Exchange::Max && t.isFloat())
        std::fill(t.floats(), t.floats() + t.getNumElements(),
                  -std::numeric_limits<float>::infinity());
      for (unsigned y : g.groupAlong(x, axes))
        transferBox(in[y], fromBoxes[y], t, box, c);
    }
    out[x] = std::move(t);
  }
  return out;
}

namespace {

bool within(const ShardBox &inner, const ShardBox &outer) {
  for (size_t i = 0; i < inner.offsets.size(); ++i) {
    if (inner.extents[i] == 0)
      return true;
    if (inner.offsets[i] < outer.offsets[i] ||
        inner.offsets[i] + inner.extents[i] >
            outer.offsets[i] + outer.extents[i])
      return false;
  }
  return true;
}

/// Whether the union of `pieces` covers `box`: the box is cut into cells at
/// every piece boundary and each cell must lie in some piece.
bool covered(const ShardBox &box, llvm::ArrayRef<ShardBox> pieces) {
  size_t rank = box.offsets.size();
  std::vector<std::vector<int64_t>> cuts(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t lo = box.offsets[i], hi = lo + box.extents[i];
    if (hi <= lo)
      return true;
    cuts[i] = {lo, hi};
    for (const ShardBox &p : pieces)
      for (int64_t c : {p.offsets[i], p.offsets[i] + p.extents[i]})
        if (c > lo && c < hi)
          cuts[i].push_back(c);
    llvm::sort(cuts[i]);
    cuts[i].erase(std::unique(cuts[i].begin(), cuts[i].end()), cuts[i].end());
  }
  std::vector<size_t> cell(rank, 0);
  while (true) {
    ShardBox c;
    for (size_t i = 0; i < rank; ++i) {
      c.offsets.push_back(cuts[i][cell[i]]);
      c.extents.push_back(cuts[i][cell[i] + 1] - cuts[i][cell[i]]);
    }
    if (llvm::none_of(pieces, [&](const ShardBox &p) {
          return llvm::all_of(p.extents, [](int64_t e) { return e > 0; }) &&
                 within(c, p);
        }))
      return false;
    size_t i = rank;
    while (i-- > 0) {
      if (++cell[i] + 1 < cuts[i].size())
        break;
      cell[i] = 0;
    }
    if (i == size_t(-1))
      return true;
  }
}

} // namespace

std::optional<unsigned> weft::exec::unreachableDevice(
    const spmd::ShardGeometry &g, llvm::ArrayRef<int64_t> shape,
    spmd::DistAttr from, spmd::DistAttr to, spmd::MeshAxes axes, Exchange how) {
  unsigned n = g.numDevices();
  std::vector<ShardBox> fromBoxes(n);
  for (unsigned d = 0; d < n; ++d)
    fromBoxes[d] = g.shardBox(shape, from, d);
  for (unsigned x = 0; x < n; ++x) {
    ShardBox box = g.shardBox(shape, to, x);
    if (how == Exchange::Own) {
      if (!within(box, fromBoxes[x]) && !within(fromBoxes[x], box))
        return x;
      continue;
    }
    llvm::SmallVector<ShardBox, 8> pieces;
    for (unsigned y : g.groupAlong(x, axes))
      pieces.push_back(fromBoxes[y]);
    if (!covered(box, pieces))
      return x;
  }
  return std::nullopt;
}

std::string weft::exec::boxString(const ShardBox &box) {
  std::string s = "[";
  for (size_t i = 0; i < box.offsets.size(); ++i)
    s += (i ? ", " : "") + std::to_string(box.offsets[i]) + ":" +
         std::to_string(box.offsets[i] + box.extents[i]);
  return s + "]";
}

void weft::exec::allReduceStats(const spmd::ShardGeometry &g,
                                std::vector<std::vector<double>> &stats,
                                spmd::MeshAxes axes, bool max) {
  unsigned n = g.numDevices();
  std::vector<std::vector<double>> out(n);
  for (unsigned x = 0; x < n; ++x) {
    std::vector<double> acc(
        stats[x].size(), max ? -std::numeric_limits<double>::infinity() : 0.0);
    for (unsigned y : g.groupAlong(x, axes)) {
      const std::vector<double> &s = stats[y];
      for (size_t i = 0; i < acc.size() && i < s.size(); ++i)
        acc[i] = max ? std::max(acc[i], s[i]) : acc[i] + s[i];
    }
    out[x] = std::move(acc);
  }
  stats = std::move(out);
}

Tensor weft::exec::combinedShard(const spmd::ShardGeometry &g,
                                 const DistValue &v, unsigned d) {
  spmd::MeshAxes sumAxes = 0, maxAxes = 0;
  for (auto [a, e] : llvm::enumerate(v.dist.getAxes())) {
    if (e.kind == spmd::AxisDist::Kind::Sum)
      sumAxes |= 1u << a;
    if (e.kind == spmd::AxisDist::Kind::Max)
      maxAxes |= 1u << a;
  }
  if (!sumAxes && !maxAxes)
    return v.shard(d);
  // Max axes first (within each sum member), then the sum: a value partial
  // in both ways is not produced by any recipe, so the order is moot.
  auto combineOver = [&](spmd::MeshAxes axes, bool max, unsigned x) {
    Tensor t = v.shard(x);
    for (unsigned y : g.groupAlong(x, axes)) {
      if (y == x)
        continue;
      const Tensor &o = v.shard(y);
      for (int64_t i = 0; i < t.getNumElements(); ++i)
        t.floats()[i] = max ? std::max(t.floats()[i], o.floats()[i])
                            : t.floats()[i] + o.floats()[i];
    }
    return t;
  };
  if (!sumAxes)
    return combineOver(maxAxes, true, d);
  if (!maxAxes)
    return combineOver(sumAxes, false, d);
  Tensor t = Tensor::zeros(v.shard(d).getShape());
  for (unsigned y : g.groupAlong(d, sumAxes)) {
    Tensor m = combineOver(maxAxes, true, y);
    for (int64_t i = 0; i < t.getNumElements(); ++i)
      t.floats()[i] += m.floats()[i];
  }
  return t;
}

Tensor weft::exec::wholeOf(const spmd::ShardGeometry &g, const DistValue &v,
                           llvm::ArrayRef<int64_t> shape) {
  Tensor whole(v.shard(0).getElementType(), shape);
  ShardBox all;
  all.offsets.assign(shape.size(), 0);
  all.extents.assign(shape.begin(), shape.end());
  for (unsigned x = g.numDevices(); x-- > 0;)
    transferBox(combinedShard(g, v, x), g.shardBox(shape, v.dist, x), whole,
                all, Combine::Copy);
  return whole;
}

spmd::DistAttr weft::exec::restrictDist(spmd::DistAttr dist,
                                        spmd::MeshAxes keep) {
  for (unsigned a = 0; a < dist.getAxes().size(); ++a)
    if (!(keep & (1u << a)))
      dist = dist.with(a, spmd::AxisDist::identity());
  return dist;
}
