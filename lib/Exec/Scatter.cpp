//===- Scatter.cpp - Scatters as targets plus a combine per update --------===//

#include "weft/Exec/Scatter.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>
#include <numeric>

using namespace weft::exec;

std::optional<ScatterReduction>
weft::exec::parseScatterReduction(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScatterReduction>>(name)
      .Case("none", ScatterReduction::None)
      .Case("add", ScatterReduction::Add)
      .Case("mul", ScatterReduction::Mul)
      .Case("max", ScatterReduction::Max)
      .Case("min", ScatterReduction::Min)
      .Default(std::nullopt);
}

namespace {

/// The local position along dim d of the global index v, or −1 outside the
/// shard.
int64_t localIndex(int64_t v, size_t d, int64_t localExtent,
                   const GlobalView &view) {
  int64_t global = view.globalShape.empty() ? localExtent : view.globalShape[d];
  if (v < 0)
    v += global;
  if (!view.offsets.empty())
    v -= view.offsets[d];
  return v >= 0 && v < localExtent ? v : -1;
}

} // namespace

std::vector<int64_t>
weft::exec::scatterElementsTargets(llvm::ArrayRef<int64_t> dataShape,
                                   const Tensor &indices, int64_t axis,
                                   GlobalView view) {
  llvm::ArrayRef<int64_t> shape = indices.getShape();
  Shape dataStrides = stridesOf(dataShape);
  int64_t rank = shape.size(), n = indices.getNumElements();
  std::vector<int64_t> targets(n);
  Shape coord(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t pos = localIndex(indices.ints()[e], axis, dataShape[axis], view);
    int64_t target = -1;
    if (pos >= 0) {
      target = 0;
      for (int64_t d = 0; d < rank; ++d)
        target += (d == axis ? pos : coord[d]) * dataStrides[d];
    }
    targets[e] = target;
    // The next coordinate of `indices`, row-major.
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < shape[d])
        break;
      coord[d] = 0;
    }
  }
  return targets;
}

std::vector<int64_t>
weft::exec::scatterNdTargets(llvm::ArrayRef<int64_t> dataShape,
                             const Tensor &indices, GlobalView view) {
  int64_t k = indices.getShape().back();
  int64_t tuples = k ? indices.getNumElements() / k : 0;
  int64_t slice = numElementsOf(dataShape.drop_front(k));
  Shape dataStrides = stridesOf(dataShape);
  std::vector<int64_t> targets(tuples * slice, -1);
  for (int64_t u = 0; u < tuples; ++u) {
    int64_t base = 0;
    for (int64_t j = 0; j < k && base >= 0; ++j) {
      int64_t pos =
          localIndex(indices.ints()[u * k + j], j, dataShape[j], view);
      base = pos < 0 ? -1 : base + pos * dataStrides[j];
    }
    if (base < 0)
      continue;
    for (int64_t s = 0; s < slice; ++s)
      targets[u * slice + s] = base + s;
  }
  return targets;
}

namespace {

template <typename T>
void combine(T *out, const T *upd, llvm::ArrayRef<int64_t> targets,
             ScatterReduction r) {
  for (size_t i = 0; i < targets.size(); ++i) {
    int64_t t = targets[i];
    if (t < 0)
      continue;
    switch (r) {
    case ScatterReduction::None:
      out[t] = upd[i];
      break;
    case ScatterReduction::Add:
      out[t] += upd[i];
      break;
    case ScatterReduction::Mul:
      out[t] *= upd[i];
      break;
    case ScatterReduction::Max:
      // Strictly larger: the data, then the earliest update, wins ties.
      if (upd[i] > out[t])
        out[t] = upd[i];
      break;
    case ScatterReduction::Min:
      if (upd[i] < out[t])
        out[t] = upd[i];
      break;
    }
  }
}

} // namespace

Tensor weft::exec::scatter(const Tensor &data, const Tensor &updates,
                           llvm::ArrayRef<int64_t> targets,
                           ScatterReduction reduction) {
  Tensor out = data;
  if (out.isFloat())
    combine(out.floats(), updates.floats(), targets, reduction);
  else
    combine(out.ints(), updates.ints(), targets, reduction);
  return out;
}

ScatterGrads weft::exec::scatterBackward(const Tensor &data,
                                         const Tensor &updates,
                                         llvm::ArrayRef<int64_t> targets,
                                         ScatterReduction reduction,
                                         const Tensor &dy) {
  ScatterGrads g{dy, Tensor(ElementType::F32, updates.getShape())};
  g.data.convertTo(ElementType::F32);
  float *dd = g.data.floats(), *du = g.updates.floats();
  const float *y = dy.floats(), *x = data.floats(), *u = updates.floats();
  int64_t n = targets.size();
  switch (reduction) {
  case ScatterReduction::Add:
    for (int64_t i = 0; i < n; ++i)
      if (targets[i] >= 0)
        du[i] = y[targets[i]];
    return g;
  case ScatterReduction::None: {
    // The last write to a position is the one that shows.
    std::vector<bool> written(g.data.getNumElements(), false);
    for (int64_t i = n - 1; i >= 0; --i) {
      int64_t t = targets[i];
      if (t < 0 || written[t])
        continue;
      written[t] = true;
      du[i] = y[t];
      dd[t] = 0;
    }
    return g;
  }
  default:
    break;
  }
  // Mul, max, min: the updates of each position in order.
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return targets[a] < targets[b];
  });
  for (int64_t begin = 0; begin < n;) {
    int64_t t = targets[order[begin]], end = begin;
    while (end < n && targets[order[end]] == t)
      ++end;
    if (t < 0) {
      begin = end;
      continue;
    }
    if (reduction == ScatterReduction::Mul) {
      // d data = dy · Π u; d u_i = dy · data · Π_{j≠i} u_j (prefix and
      // suffix products, no division).
      int64_t m = end - begin;
      std::vector<double> prefix(m + 1, 1.0), suffix(m + 1, 1.0);
      for (int64_t j = 0; j < m; ++j)
        prefix[j + 1] = prefix[j] * u[order[begin + j]];
      for (int64_t j = m; j > 0; --j)
        suffix[j - 1] = suffix[j] * u[order[begin + j - 1]];
      dd[t] = float(double(y[t]) * prefix[m]);
      for (int64_t j = 0; j < m; ++j)
        du[order[begin + j]] =
            float(double(y[t]) * x[t] * prefix[j] * suffix[j + 1]);
    } else {
      // The kept value: the data on ties, then the earliest update.
      bool isMax = reduction == ScatterReduction::Max;
      float best = x[t];
      int64_t winner = -1;
      for (int64_t j = begin; j < end; ++j) {
        float v = u[order[j]];
        if (isMax ? v > best : v < best) {
          best = v;
          winner = order[j];
        }
      }
      if (winner >= 0) {
        du[winner] = y[t];
        dd[t] = 0;
      }
    }
    begin = end;
  }
  return g;
}
