//===- SegmentTable.cpp - The segments of a plan being built --------------===//

#include "weft/Spmd/SegmentTable.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::spmd;

std::vector<int64_t> spmd::classIndexOfNodes(MeshAttr mesh) {
  std::vector<int64_t> out(mesh.getNumNodes(), -1);
  // The first class listing a node, as getClassIndexOfNode.
  for (auto [i, a] : llvm::enumerate(mesh.getClasses()))
    for (int64_t n : a.cast<DeviceClassAttr>().getNodes().asArrayRef())
      if (n >= 0 && n < int64_t(out.size()) && out[n] < 0)
        out[n] = i;
  return out;
}

MeshShape MeshShape::of(MeshAttr mesh) {
  MeshShape out;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    out.axisSizes.push_back(mesh.getAxisSize(a));
  out.devicesPerClass.assign(mesh.getClasses().size(), 0);
  std::vector<int64_t> classOfNode = classIndexOfNodes(mesh);
  for (int64_t n = 0; n < int64_t(classOfNode.size()); ++n) {
    int64_t cls = std::max<int64_t>(classOfNode[n], 0);
    for (int64_t l = 0; l < mesh.getDevicesPerNode(); ++l) {
      out.classOfDevice.push_back(cls);
      ++out.devicesPerClass[cls];
    }
  }
  return out;
}

std::vector<int64_t> spmd::largestRemainder(llvm::ArrayRef<double> shares,
                                            int64_t total) {
  std::vector<int64_t> out(shares.size());
  std::vector<std::pair<double, size_t>> rest;
  int64_t given = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    out[i] = std::max<int64_t>(0, int64_t(std::floor(shares[i] + 1e-9)));
    given += out[i];
    rest.push_back({shares[i] - double(out[i]), i});
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < total && !rest.empty();
       k = (k + 1) % rest.size(), ++given)
    ++out[rest[k].second];
  // Rounding up overshot (shares summing above total): take back from the
  // largest.
  while (given > total) {
    auto it = std::max_element(out.begin(), out.end());
    --*it;
    --given;
  }
  return out;
}

SegmentTable::SegmentTable(mlir::MLIRContext *ctx, MeshShape shape,
                           llvm::ArrayRef<SegmentAttr> initial)
    : ctx(ctx), shape(std::move(shape)),
      segments(initial.begin(), initial.end()) {}

int64_t SegmentTable::add(int64_t extent, llvm::ArrayRef<double> ratios,
                          llvm::ArrayRef<int64_t> sizes, int64_t align) {
  for (SegmentAttr s : segments)
    if (s.getExtent() == extent && s.getAlign() == align &&
        s.getRatios().asArrayRef() == ratios && s.getSizes() &&
        s.getSizes().asArrayRef() == sizes)
      return s.getId();
  int64_t id = segments.size();
  segments.push_back(SegmentAttr::get(
      ctx, id, extent, mlir::DenseF64ArrayAttr::get(ctx, ratios),
      mlir::DenseI64ArrayAttr::get(ctx, sizes), align));
  return id;
}

int64_t SegmentTable::get(int64_t extent, llvm::ArrayRef<double> ratios,
                          uint32_t axes, int64_t align) {
  if (align < 1 || extent % align)
    align = 1;
  auto key = std::make_tuple(extent, ratios.vec(), axes, align);
  if (auto it = byRequest.find(key); it != byRequest.end())
    return it->second;
  unsigned numDevices = shape.numDevices();
  unsigned numAxes = shape.axisSizes.size();
  // Positions on the split axes (lexicographic, axis 0 major); each gets the
  // sum of its devices' shares.
  std::map<llvm::SmallVector<int64_t, 4>, std::vector<unsigned>> positions;
  for (unsigned d = 0; d < numDevices; ++d) {
    llvm::SmallVector<int64_t, 4> coords(numAxes), key;
    int64_t rest = d;
    for (int a = numAxes - 1; a >= 0; --a) {
      coords[a] = rest % shape.axisSizes[a];
      rest /= shape.axisSizes[a];
    }
    for (unsigned a = 0; a < numAxes; ++a)
      key.push_back(axes & (1u << a) ? coords[a] : -1);
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
  int64_t id = add(extent, ratios, sizes, align);
  byRequest[key] = id;
  return id;
}

int64_t SegmentTable::scaled(int64_t id, int64_t unit, int64_t extent,
                             int64_t align) {
  SegmentAttr s = segments[id];
  if (unit < 1 || align < 1 || !s.getSizes() || s.getExtent() % unit ||
      extent % align || s.getExtent() / unit != extent / align)
    return -1;
  if (unit == align && extent == s.getExtent())
    return id;
  llvm::SmallVector<int64_t> sizes;
  for (int64_t size : s.getSizes().asArrayRef()) {
    if (size % unit)
      return -1;
    sizes.push_back(size / unit * align);
  }
  return add(extent, s.getRatios().asArrayRef(), sizes, align);
}
