//===- SegmentTable.cpp - Segments of a baseline plan ---------------------===//

#include "SegmentTable.h"
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace weft;
using namespace weft::baselines;

std::vector<int64_t> baselines::largestRemainder(llvm::ArrayRef<double> shares,
                                                 int64_t total) {
  std::vector<int64_t> out(shares.size());
  std::vector<std::pair<double, size_t>> rest;
  int64_t given = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    out[i] = int64_t(std::floor(shares[i] + 1e-9));
    given += out[i];
    rest.push_back({shares[i] - double(out[i]), i});
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < total && k < rest.size(); ++k, ++given)
    ++out[rest[k].second];
  return out;
}

int64_t SegmentTable::get(int64_t extent, llvm::ArrayRef<double> ratios,
                          uint32_t axes, int64_t align) {
  if (extent % align)
    align = 1;
  auto key = std::make_tuple(extent, ratios.vec(), axes, align);
  if (auto it = byRequest.find(key); it != byRequest.end())
    return it->second;
  unsigned numDevices = shape.numDevices();
  unsigned numAxes = shape.axisSizes.size();
  // Coordinates of every device, node-major.
  std::vector<llvm::SmallVector<int64_t, 4>> coords(numDevices);
  for (unsigned d = 0; d < numDevices; ++d) {
    int64_t rest = d;
    coords[d].resize(numAxes);
    for (int a = numAxes - 1; a >= 0; --a) {
      coords[d][a] = rest % shape.axisSizes[a];
      rest /= shape.axisSizes[a];
    }
  }
  // Positions on the split axes; each gets the sum of its devices' shares.
  std::map<llvm::SmallVector<int64_t, 4>, std::vector<unsigned>> positions;
  for (unsigned d = 0; d < numDevices; ++d) {
    llvm::SmallVector<int64_t, 4> key;
    for (unsigned a = 0; a < numAxes; ++a)
      key.push_back(axes & (1u << a) ? coords[d][a] : -1);
    positions[key].push_back(d);
  }
  int64_t units = extent / align;
  std::vector<double> shares;
  for (auto &[key, members] : positions) {
    double s = 0;
    for (unsigned d : members)
      s += ratios[shape.classOfDevice[d]] * double(units);
    shares.push_back(s);
  }
  std::vector<int64_t> perPosition = largestRemainder(shares, units);
  llvm::SmallVector<int64_t> sizes(numDevices);
  size_t p = 0;
  for (auto &[key, members] : positions) {
    std::vector<double> even(members.size(),
                             double(perPosition[p]) / members.size());
    std::vector<int64_t> split = largestRemainder(even, perPosition[p]);
    for (size_t i = 0; i < members.size(); ++i)
      sizes[members[i]] = split[i] * align;
    ++p;
  }
  int64_t id = segments.size();
  segments.push_back(spmd::SegmentAttr::get(
      ctx, id, extent, mlir::DenseF64ArrayAttr::get(ctx, ratios),
      mlir::DenseI64ArrayAttr::get(ctx, sizes), align));
  byRequest[key] = id;
  return id;
}

int64_t SegmentTable::derive(int64_t parent, int64_t num, int64_t den) {
  auto key = std::make_tuple(parent, num, den);
  if (auto it = byDerivation.find(key); it != byDerivation.end())
    return it->second;
  spmd::SegmentAttr p = segments[parent];
  llvm::SmallVector<int64_t> sizes;
  for (int64_t s : p.getSizes().asArrayRef()) {
    if ((s * num) % den)
      return byDerivation[key] = -1;
    sizes.push_back(s * num / den);
  }
  int64_t align = (p.getAlign() * num) % den ? 1 : p.getAlign() * num / den;
  align = std::max<int64_t>(1, align);
  // A reshape back to an earlier extent finds that extent's segment again.
  for (spmd::SegmentAttr s : segments)
    if (s.getExtent() == p.getExtent() * num / den &&
        s.getRatios() == p.getRatios() && s.getSizes() &&
        s.getSizes().asArrayRef() == llvm::ArrayRef<int64_t>(sizes))
      return byDerivation[key] = s.getId();
  int64_t id = segments.size();
  segments.push_back(
      spmd::SegmentAttr::get(ctx, id, p.getExtent() * num / den, p.getRatios(),
                             mlir::DenseI64ArrayAttr::get(ctx, sizes), align));
  return byDerivation[key] = id;
}
