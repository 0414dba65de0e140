//===- KinkTies.cpp - Elements of non-smooth ops that sit at a kink -------===//
//
// Each piecewise op says which of its input elements lie within the
// reassociation tolerance of a kink (a point where it switches pieces):
//
//   relu            |x| ≤ τ
//   clip            |x − min| ≤ τ or |x − max| ≤ τ
//   max, min,       |a − b| ≤ τ (both elements, after broadcasting)
//   compare
//   reduce_max,     an element within τ of its group's maximum when two or
//   max_pool        more are (the routed-to maximum may change)
//   top2_gating     every input of a token whose three largest logits have
//                   a gap ≤ τ (the expert choice may change), and the gate
//
// τ is the tolerance of the larger magnitude involved (KinkTies.h).
//
//===----------------------------------------------------------------------===//

#include "KinkTies.h"
#include "OpUtils.h"
#include "weft/Exec/Elementwise.h"
#include "llvm/ADT/TypeSwitch.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

namespace {

double maxAbs(const Tensor &t) {
  double m = 0;
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    m = std::max(m, std::fabs(double(t.floats()[i])));
  return m;
}

/// τ of a value of magnitude `x` in a tensor of largest magnitude `scale`.
double tau(const TieTolerance &tol, double x, double scale) {
  return tol.atol + tol.rtol * (std::fabs(x) + 0.01 * scale);
}

/// For every element of the broadcast of shapes `a` and `b`, the flat index
/// into a tensor of shape `of` (one of the two) it reads.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> out,
                                      llvm::ArrayRef<int64_t> of) {
  int64_t n = numElementsOf(out), rank = out.size();
  int64_t lead = rank - int64_t(of.size());
  Shape strides = stridesOf(of);
  std::vector<int64_t> idx(n);
  Shape coord(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = 0;
    for (int64_t d = lead; d < rank; ++d)
      if (of[d - lead] != 1)
        k += coord[d] * strides[d - lead];
    idx[i] = k;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < out[d])
        break;
      coord[d] = 0;
    }
  }
  return idx;
}

/// Elements of a and b (broadcast together) with |a − b| ≤ τ.
void pairTies(const Tensor &a, const Tensor &b, const TieTolerance &tol,
              std::vector<bool> &ma, std::vector<bool> &mb) {
  Shape out = broadcastShapes(a.getShape(), b.getShape());
  std::vector<int64_t> ia = broadcastIndices(out, a.getShape());
  std::vector<int64_t> ib = broadcastIndices(out, b.getShape());
  double scale = std::max(maxAbs(a), maxAbs(b));
  for (size_t o = 0; o < ia.size(); ++o) {
    double x = a.floats()[ia[o]], y = b.floats()[ib[o]];
    if (std::fabs(x - y) <=
        tau(tol, std::max(std::fabs(x), std::fabs(y)), scale))
      ma[ia[o]] = mb[ib[o]] = true;
  }
}

/// Marks the near-maxima of every group (`members` lists each group's
/// element indices) that has two or more of them.
template <typename ForEachGroup>
void groupMaxTies(const Tensor &x, const TieTolerance &tol,
                  std::vector<bool> &marks, ForEachGroup forEachGroup) {
  double scale = maxAbs(x);
  const float *v = x.floats();
  forEachGroup([&](llvm::ArrayRef<int64_t> members) {
    if (members.size() < 2)
      return;
    double m = -INFINITY;
    for (int64_t i : members)
      m = std::max(m, double(v[i]));
    double t = tau(tol, m, scale);
    int count = 0;
    for (int64_t i : members)
      count += double(v[i]) >= m - t;
    if (count < 2)
      return;
    for (int64_t i : members)
      if (double(v[i]) >= m - t)
        marks[i] = true;
  });
}

void reduceMaxTies(const Tensor &x, llvm::ArrayRef<int64_t> axes,
                   const TieTolerance &tol, std::vector<bool> &marks) {
  int64_t rank = x.getRank();
  llvm::SmallVector<bool, 4> reduced(rank, false);
  for (int64_t a : axes)
    reduced[axisOf(uint64_t(a), rank)] = true;
  // Group key: the coordinates on the kept dims.
  std::vector<std::vector<int64_t>> groups;
  Shape keptShape;
  for (int64_t d = 0; d < rank; ++d)
    keptShape.push_back(reduced[d] ? 1 : x.getDim(d));
  groups.resize(numElementsOf(keptShape));
  Shape keptStrides = stridesOf(keptShape), coord(rank, 0);
  for (int64_t i = 0; i < x.getNumElements(); ++i) {
    int64_t key = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        key += coord[d] * keptStrides[d];
    groups[key].push_back(i);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < x.getDim(d))
        break;
      coord[d] = 0;
    }
  }
  groupMaxTies(x, tol, marks, [&](auto fn) {
    for (auto &members : groups)
      fn(members);
  });
}

void maxPoolTies(const Tensor &x, const PoolParams &p, const TieTolerance &tol,
                 std::vector<bool> &marks) {
  groupMaxTies(x, tol, marks, [&](auto fn) {
    std::vector<int64_t> members;
    int64_t window = -1;
    forEachPoolWindowElement(x.getShape(), p, [&](int64_t out, int64_t in) {
      if (out != window && !members.empty()) {
        fn(members);
        members.clear();
      }
      window = out;
      members.push_back(in);
    });
    if (!members.empty())
      fn(members);
  });
}

/// Tokens (G×S×M) whose top-3 logits against the gate (M×E) have a gap
/// within τ: every element of those tokens, and the whole gate.
void gatingTies(const Tensor &tokens, const Tensor &gate,
                const TieTolerance &tol, std::vector<bool> &mt,
                std::vector<bool> &mg) {
  int64_t rows = tokens.getDim(0) * tokens.getDim(1), m = tokens.getDim(2),
          e = gate.getDim(1);
  std::vector<double> logits(rows * e, 0.0);
  double scale = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < e; ++k) {
      double s = 0;
      for (int64_t j = 0; j < m; ++j)
        s += double(tokens.floats()[r * m + j]) * gate.floats()[j * e + k];
      logits[r * e + k] = s;
      scale = std::max(scale, std::fabs(s));
    }
  bool any = false;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(logits.begin() + r * e,
                            logits.begin() + (r + 1) * e);
    std::sort(row.begin(), row.end(), std::greater<double>());
    bool tie = false;
    for (size_t k = 0; k + 1 < std::min<size_t>(row.size(), 3); ++k)
      tie |= row[k] - row[k + 1] <= tau(tol, row[k], scale);
    if (!tie)
      continue;
    any = true;
    std::fill(mt.begin() + r * m, mt.begin() + (r + 1) * m, true);
  }
  if (any)
    std::fill(mg.begin(), mg.end(), true);
}

} // namespace

bool weft::exec::hasKinks(mlir::Operation &op) {
  return llvm::isa<g::ReluOp, g::ClipOp, g::MaxOp, g::MinOp, g::CompareOp,
                   g::ReduceMaxOp, g::MaxPoolOp, g::Top2GatingOp>(op);
}

std::vector<std::vector<bool>>
weft::exec::kinkElements(mlir::Operation &op,
                         llvm::ArrayRef<const Tensor *> operands,
                         const TieTolerance &tol) {
  std::vector<std::vector<bool>> marks(operands.size());
  for (auto [i, t] : llvm::enumerate(operands))
    if (t && t->isFloat())
      marks[i].assign(t->getNumElements(), false);
  auto floatArg = [&](unsigned i) {
    return i < operands.size() && operands[i] && operands[i]->isFloat();
  };
  if (!floatArg(0))
    return marks;
  const Tensor &x = *operands[0];
  llvm::TypeSwitch<mlir::Operation *>(&op)
      .Case([&](g::ReluOp) {
        double scale = maxAbs(x);
        for (int64_t i = 0; i < x.getNumElements(); ++i)
          marks[0][i] = std::fabs(x.floats()[i]) <= tau(tol, 0, scale);
      })
      .Case([&](g::ClipOp c) {
        double scale = maxAbs(x);
        for (std::optional<llvm::APFloat> bound : {c.getMin(), c.getMax()}) {
          if (!bound)
            continue;
          double b = bound->convertToDouble();
          for (int64_t i = 0; i < x.getNumElements(); ++i)
            if (std::fabs(x.floats()[i] - b) <= tau(tol, b, scale))
              marks[0][i] = true;
        }
      })
      .Case<g::MaxOp, g::MinOp, g::CompareOp>([&](auto) {
        if (floatArg(1))
          pairTies(x, *operands[1], tol, marks[0], marks[1]);
      })
      .Case([&](g::ReduceMaxOp c) {
        reduceMaxTies(x, c.getAxes(), tol, marks[0]);
      })
      .Case(
          [&](g::MaxPoolOp c) { maxPoolTies(x, poolParams(c), tol, marks[0]); })
      .Case([&](g::Top2GatingOp) {
        if (floatArg(1) && x.getRank() == 3)
          gatingTies(x, *operands[1], tol, marks[0], marks[1]);
      });
  return marks;
}

int64_t weft::exec::resolveTies(mlir::Operation &op,
                                llvm::ArrayRef<const Tensor *> reference,
                                llvm::ArrayRef<const Tensor *> plan,
                                const TieTolerance &tol,
                                llvm::SmallVectorImpl<Tensor> &replacement) {
  replacement.clear();
  replacement.resize(reference.size());
  if (!hasKinks(op))
    return 0;
  std::vector<std::vector<bool>> marks = kinkElements(op, reference, tol);
  int64_t taken = 0;
  for (auto [i, ref] : llvm::enumerate(reference)) {
    if (i >= plan.size() || !plan[i] || marks[i].empty() ||
        plan[i]->getShape() != ref->getShape())
      continue;
    const float *r = ref->floats(), *p = plan[i]->floats();
    double scale = maxAbs(*ref);
    Tensor out;
    for (int64_t k = 0; k < ref->getNumElements(); ++k) {
      // The plan's value, when it agrees with the reference's within the
      // tolerance and differs from it at all.
      if (!marks[i][k] || r[k] == p[k] ||
          !(std::fabs(double(p[k]) - r[k]) <= tau(tol, r[k], scale)))
        continue;
      if (!out.isValid())
        out = *ref;
      out.floats()[k] = p[k];
      ++taken;
    }
    replacement[i] = std::move(out);
  }
  return taken;
}
